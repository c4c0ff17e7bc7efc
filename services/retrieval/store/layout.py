"""The collection layout both backends share: vector names, payload fields, payload <-> Hit.

Kept in one place so the edge store and the server store cannot store or read a paragraph
differently; each backend only translates these plain values into its own client types.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from services.retrieval.store.base import Hit, ParagraphPoint
from services.retrieval.store.sparse import SparseTerms, document_vector

DENSE = "dense"
SPARSE = "sparse"
# Keyword payload indexes: every search filters on dataset_id, deletes filter on both.
INDEXED_FIELDS = ("dataset_id", "document_id")
UPSERT_BATCH = 256  # points per write call: bounded request size and memory


def point_id(raw: str) -> str:
    """Canonical UUID text: Qdrant accepts only UUIDs or integers, and returns the canonical form."""
    try:
        return str(uuid.UUID(raw))
    except ValueError as exc:
        raise ValueError(f"paragraph id must be a UUID string, got {raw!r}") from exc


def dense_vector(vector: Sequence[float], dimension: int) -> list[float]:
    """The vector as plain floats, rejected early (not deep inside a client) if malformed."""
    values = [float(v) for v in vector]
    if len(values) != dimension:
        raise ValueError(f"dense vector has {len(values)} dimensions, the store expects {dimension}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("dense vector contains NaN or infinity")
    return values


def payload(point: ParagraphPoint) -> dict[str, Any]:
    return {
        "dataset_id": point.dataset_id,
        "document_id": point.document_id,
        "document_name": point.document_name,
        "title": point.title,
        "content": point.content,
        "position": point.position,
    }


def indexed_text(document_name: str, title: str, content: str) -> str:
    """What is embedded and keyword-indexed: the paragraph with its document and section names,
    because a question often names the document ("星澜科技…") that the paragraph does not repeat."""
    return "\n".join(part for part in (document_name, title, content) if part)


def keyword_terms(point: ParagraphPoint) -> SparseTerms:
    """Keyword side of a paragraph: the same text ingestion embeds."""
    return document_vector(indexed_text(point.document_name, point.title, point.content))


def hit(raw_id: object, score: float, fields: Mapping[str, Any] | None) -> Hit:
    """A search result from any backend; ids come back as UUID objects from edge, str from the client."""
    data = fields or {}
    return Hit(
        id=str(raw_id),
        dataset_id=str(data.get("dataset_id", "")),
        document_id=str(data.get("document_id", "")),
        document_name=str(data.get("document_name", "")),
        title=str(data.get("title", "")),
        content=str(data.get("content", "")),
        position=int(data.get("position", 0)),
        score=float(score),
    )


def dense_of_records(records: Iterable[tuple[object, object]]) -> dict[str, list[float]]:
    """Paragraph id → dense vector from retrieved records of any backend (named-vector mapping)."""
    found: dict[str, list[float]] = {}
    for raw_id, vectors in records:
        dense = vectors.get(DENSE) if isinstance(vectors, Mapping) else None
        if isinstance(dense, list):
            found[str(raw_id)] = [float(v) for v in dense]
    return found


def ranked(hits: list[Hit], limit: int) -> list[Hit]:
    """The best ``limit``, exact score ties broken by document and position (then id): engines
    order ties arbitrarily (edge even from one call to the next, e.g. the two legs' winners in
    hybrid), and the same question deserves the same evidence, at the cut too (the plan fetches a
    little more than the limit for that) and across deployments (ids are random per document)."""
    return sorted(hits, key=lambda h: (-h.score, h.document_name, h.position, h.id))[:limit]


def batches(points: Sequence[ParagraphPoint]) -> list[Sequence[ParagraphPoint]]:
    return [points[i : i + UPSERT_BATCH] for i in range(0, len(points), UPSERT_BATCH)]
