"""The vector-store contract every backend honours; the contract tests hold both to it."""

from __future__ import annotations

import enum
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol


class SearchMode(enum.StrEnum):
    VECTOR = "vector"
    KEYWORD = "keyword"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class ParagraphPoint:
    """One paragraph as stored: its text, where it came from, and its dense vector."""

    id: str  # a UUID string, stable across re-ingestion of the same document
    dataset_id: str
    document_id: str
    document_name: str
    title: str
    content: str
    position: int  # order of the paragraph inside its document
    vector: Sequence[float]  # normalised dense embedding


@dataclass(frozen=True)
class Hit:
    id: str
    dataset_id: str
    document_id: str
    document_name: str
    title: str
    content: str
    position: int
    score: float  # cosine for vector, BM25 for keyword, fused rank score for hybrid


@dataclass(frozen=True)
class SearchQuery:
    dataset_ids: tuple[str, ...]  # never empty: the caller decides what an empty list means
    text: str
    vector: Sequence[float] | None  # required for vector and hybrid
    mode: SearchMode
    limit: int
    similarity: float  # threshold on the dense cosine score (vector part only)


class VectorStore(Protocol):
    async def upsert(self, points: Sequence[ParagraphPoint]) -> None: ...

    async def delete_document(self, dataset_id: str, document_id: str, keep_ids: Collection[str] = ()) -> None:
        """Delete the document's points, except ``keep_ids`` (re-ingestion prunes what is stale)."""
        ...

    async def delete_dataset(self, dataset_id: str) -> None: ...

    async def search(self, query: SearchQuery) -> list[Hit]: ...

    async def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these paragraphs (unknown ids left out): comparing a
        question with evidence it already has costs no embedding of the evidence again."""
        ...

    async def count(self, dataset_id: str | None = None, document_id: str | None = None) -> int: ...

    async def close(self) -> None: ...
