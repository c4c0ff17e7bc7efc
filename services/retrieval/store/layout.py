"""The collection layout both backends share: vector names, payload fields, payload <-> Hit,
and which points each write touches.

Kept in one place so the edge store and the server store cannot store or read a paragraph
differently; each backend only translates these plain values (including the ``Where`` filters
and the write ``Step`` lists) into its own client types.

Paragraph states live in the payload: ``version`` (which ingestion of the document wrote it),
``published`` (the version was published), ``enabled`` (not disabled by an operator), and the
keyword-indexed ``searchable_in``, which is the dataset id exactly when the point is published
and enabled and ``NOT_SEARCHABLE`` otherwise. Searches filter on ``searchable_in`` alone, with
the same one-field ``should`` filter they used on ``dataset_id``, so staging and disabling cost
a search nothing; ``published`` is kept apart because a disabled point's ``searchable_in`` no
longer tells whether enabling it again may make it searchable.

``published`` and ``enabled`` are stored as the integers 1 and 0, not as booleans: qdrant-edge
0.9.0 turns ``MatchValue(True)`` into the integer 1, which never matches a stored ``true``, so a
boolean field could not be filtered on edge at all. ``Value`` therefore admits no ``bool``.

Attached questions are points of the same collection with a dense vector only (no keyword
terms, so they count in no IDF), ``question_of`` (their paragraph) and ``question_document``
in place of ``document_id``, and ``searchable_in`` set to ``question_key(dataset)``: no
paragraph search, document filter or version step can reach one, and a question search is
the same one-field filter on other values.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from services.retrieval.store.base import (
    AttachedQuestion,
    Hit,
    ParagraphPoint,
    QuestionMatch,
    QuestionPoint,
    StoredParagraph,
    Unchanged,
)
from services.retrieval.store.sparse import SparseTerms, document_vector

DENSE = "dense"
SPARSE = "sparse"
SEARCHABLE_IN = "searchable_in"
# Not empty: an empty string would read as "no value" to is-empty conditions, i.e. as legacy.
NOT_SEARCHABLE = "-"
# Keyword payload indexes: every search filters on searchable_in; deletes, counts and versions
# filter on dataset_id and document_id (which narrows ``version`` to a few hundred points).
QUESTION_OF = "question_of"
QUESTION_DOCUMENT = "question_document"
INDEXED_FIELDS = ("dataset_id", "document_id", SEARCHABLE_IN, QUESTION_OF, QUESTION_DOCUMENT)
UPSERT_BATCH = 256  # points per write call: bounded request size and memory
READ_BATCH = 1000  # points per retrieve / scroll call

Value = str | int  # no bool: see the module docstring
YES, NO = 1, 0  # how ``published`` and ``enabled`` are stored


@dataclass(frozen=True)
class Where:
    """Which points: all ``equal`` pairs match, no ``not_equal`` pair matches, the id is in ``ids``
    (when given) and not in ``except_ids``, the ``missing`` field has no value (when given), and
    at least one of ``any_of`` matches (when given)."""

    equal: tuple[tuple[str, Value], ...] = ()
    not_equal: tuple[tuple[str, Value], ...] = ()
    ids: tuple[str, ...] | None = None  # canonical point ids
    except_ids: tuple[str, ...] = ()
    missing: str | None = None
    any_of: tuple[Where, ...] = ()


@dataclass(frozen=True)
class SetPayload:
    """Set these payload fields on the points ``where`` selects."""

    where: Where
    values: Mapping[str, Value]


@dataclass(frozen=True)
class Remove:
    """Delete the points ``where`` selects."""

    where: Where


@dataclass(frozen=True)
class Reposition:
    """Give each point its position (canonical point id → position): one write per point."""

    positions: Mapping[str, int]


Step = SetPayload | Remove | Reposition


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


def flag(value: bool) -> int:
    return YES if value else NO


def searchable_in(dataset_id: str, published: bool, enabled: bool) -> str:
    return dataset_id if published and enabled else NOT_SEARCHABLE


def payload(point: ParagraphPoint) -> dict[str, Any]:
    return {
        **point.to_payload(),
        "version": point.version,
        "published": flag(point.searchable),
        "enabled": flag(point.enabled),
        SEARCHABLE_IN: searchable_in(point.dataset_id, point.searchable, point.enabled),
    }


def question_key(dataset_id: str) -> str:
    """What ``searchable_in`` holds on the dataset's attached questions: never a dataset id."""
    return f"?{dataset_id}"


def question_payload(question: QuestionPoint) -> dict[str, Any]:
    return {
        "dataset_id": question.dataset_id,
        QUESTION_DOCUMENT: question.document_id,
        QUESTION_OF: point_id(question.paragraph_id),
        "content": question.content,
        SEARCHABLE_IN: question_key(question.dataset_id),
    }


def is_question(fields: Mapping[str, Any] | None) -> bool:
    return bool(fields) and QUESTION_OF in (fields or {})


def attached_question(raw_id: object, fields: Mapping[str, Any] | None) -> AttachedQuestion:
    data = fields or {}
    return AttachedQuestion(
        id=str(raw_id),
        dataset_id=str(data.get("dataset_id", "")),
        document_id=str(data.get(QUESTION_DOCUMENT, "")),
        paragraph_id=str(data.get(QUESTION_OF, "")),
        content=str(data.get("content", "")),
    )


def question_match(raw_id: object, score: float, fields: Mapping[str, Any] | None) -> QuestionMatch:
    return QuestionMatch(attached_question(raw_id, fields), float(score))


def questions_in_order(questions: Iterable[AttachedQuestion]) -> list[AttachedQuestion]:
    return sorted(questions, key=lambda q: (q.paragraph_id, q.content, q.id))


def of_questions(
    dataset_id: str,
    paragraph_ids: Collection[str] | None,
    document_id: str | None,
    question_ids: Collection[str] | None = None,
) -> Where | None:
    """The dataset's attached questions, of these paragraphs, this document, these ids; None
    when an empty collection was given, which no question matches."""
    if (paragraph_ids is not None and not paragraph_ids) or (question_ids is not None and not question_ids):
        return None
    equal: tuple[tuple[str, Value], ...] = (("dataset_id", dataset_id), (SEARCHABLE_IN, question_key(dataset_id)))
    if document_id is not None:
        equal += ((QUESTION_DOCUMENT, document_id),)
    of_paragraphs = tuple(Where(equal=((QUESTION_OF, point_id(i)),)) for i in sorted(paragraph_ids or ()))
    ids = tuple(point_id(i) for i in question_ids) if question_ids is not None else None
    return Where(equal=equal, ids=ids, any_of=of_paragraphs)


def searchable_hits(
    records: Iterable[tuple[object, Mapping[str, Any] | None]], dataset_ids: Collection[str]
) -> dict[str, Hit]:
    """Retrieved points as search hits (score 0), those a search of ``dataset_ids`` could return."""
    found: dict[str, Hit] = {}
    for raw_id, fields in records:
        data = fields or {}
        if not is_question(data) and data.get(SEARCHABLE_IN) in dataset_ids:
            found[str(raw_id)] = hit(raw_id, 0.0, data)
    return found


def best_matches(matches: Iterable[QuestionMatch], limit: int) -> list[QuestionMatch]:
    """Best first, ties in a stable order (engines order them arbitrarily)."""
    return sorted(matches, key=lambda m: (-m.score, m.question.content, m.question.id))[:limit]


def paragraph_of(raw_id: object, fields: Mapping[str, Any] | None) -> StoredParagraph | None:
    """A retrieved point as a paragraph; None for an attached question, which is none."""
    return None if is_question(fields) else stored_paragraph(raw_id, fields)


def indexed_text(document_name: str, title: str, content: str) -> str:
    """What is embedded and keyword-indexed: the paragraph with its document and section names,
    because a question often names the document ("星澜科技…") that the paragraph does not repeat."""
    return "\n".join(part for part in (document_name, title, content) if part)


def keyword_terms(point: ParagraphPoint) -> SparseTerms:
    """Keyword side of a paragraph: the same text ingestion embeds."""
    return document_vector(indexed_text(point.document_name, point.title, point.content))


def hit(raw_id: object, score: float, fields: Mapping[str, Any] | None) -> Hit:
    """A search result from any backend."""
    return Hit.from_payload(raw_id, fields, score=float(score), version=stored_version(fields))


def stored_paragraph(raw_id: object, fields: Mapping[str, Any] | None) -> StoredParagraph:
    """A retrieved or scrolled point of any backend, as an operator sees it."""
    enabled = bool((fields or {}).get("enabled", YES))
    return StoredParagraph.from_payload(raw_id, fields, version=stored_version(fields), enabled=enabled)


def stored_version(fields: Mapping[str, Any] | None) -> int:
    """The version a point's payload says wrote it (0: a point from before versions)."""
    return int((fields or {}).get("version", 0))


def in_order(paragraphs: Iterable[StoredParagraph]) -> list[StoredParagraph]:
    """Document order; the id decides between equal positions so the order never varies."""
    return sorted(paragraphs, key=lambda p: (p.position, p.id))


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
    little more than the limit for that) and across deployments (ids are random per document).

    Hits of a document's older version are dropped when a newer version of it is among the hits:
    publishing makes the new version searchable before it deletes the old one, and a search in
    between must not answer from both."""
    return sorted(current_versions(hits), key=lambda h: (-h.score, h.document_name, h.position, h.id))[:limit]


def current_versions(hits: Iterable[Hit]) -> list[Hit]:
    """The hits whose version is the newest seen for their document."""
    listed = list(hits)
    newest: dict[tuple[str, str], int] = {}
    for h in listed:
        key = (h.dataset_id, h.document_id)
        newest[key] = max(newest.get(key, h.version), h.version)
    return [h for h in listed if h.version == newest[(h.dataset_id, h.document_id)]]


_Point = TypeVar("_Point")


def batches(points: Sequence[_Point]) -> list[Sequence[_Point]]:
    return [points[i : i + UPSERT_BATCH] for i in range(0, len(points), UPSERT_BATCH)]


def id_batches(ids: Sequence[str]) -> list[list[str]]:
    """Canonical ids in read-sized batches (retrieve requests stay bounded)."""
    canonical = [point_id(i) for i in ids]
    return [canonical[i : i + READ_BATCH] for i in range(0, len(canonical), READ_BATCH)]


# Which points each operation touches, and what it writes: decided here, rendered by backends.


def of_document(dataset_id: str, document_id: str) -> Where:
    return Where(equal=(("dataset_id", dataset_id), ("document_id", document_id)))


def of_version(dataset_id: str, document_id: str, version: int) -> Where:
    return Where(equal=(("dataset_id", dataset_id), ("document_id", document_id), ("version", version)))


def counted(dataset_id: str | None, document_id: str | None) -> Where | None:
    """What ``count`` counts: every point of the dataset / document (staged ones too), or all."""
    equal = tuple((k, v) for k, v in (("dataset_id", dataset_id), ("document_id", document_id)) if v)
    return Where(equal=equal) if equal else None


def document_removal(dataset_id: str, document_id: str, keep_ids: Collection[str]) -> list[Step]:
    """All versions of the document, except the points to keep, and the questions attached to
    the paragraphs removed."""
    keep = tuple(point_id(i) for i in keep_ids)
    return [
        Remove(Where(equal=of_document(dataset_id, document_id).equal, except_ids=keep)),
        orphaned_questions(dataset_id, document_id, keep),
    ]


def orphaned_questions(dataset_id: str, document_id: str, kept: Collection[str]) -> Remove:
    """The document's attached questions whose paragraph is not among ``kept``."""
    return Remove(
        Where(
            equal=(("dataset_id", dataset_id), (QUESTION_DOCUMENT, document_id)),
            not_equal=tuple((QUESTION_OF, point_id(i)) for i in sorted(kept)),
        )
    )


def point_removal(ids: Collection[str]) -> list[Step]:
    """These points, and the questions attached to those of them that are paragraphs."""
    canonical = tuple(point_id(i) for i in ids)
    return [
        Remove(Where(ids=canonical)),
        Remove(Where(any_of=tuple(Where(equal=((QUESTION_OF, i),)) for i in canonical))),
    ]


def publication(dataset_id: str, document_id: str, version: int, unchanged: Unchanged | None = None) -> list[Step]:
    """Publish one version: the paragraphs it keeps from the served version move to their new
    places, then its points and the kept ones become that version, published (the enabled ones
    searchable), in one write, then the document's other versions go, and last the questions
    attached to the paragraphs gone (a kept paragraph keeps its questions). In this order a crash
    or a search in between sees the old version whole or the new one whole (beside the old one's
    leftovers, which ``ranked`` hides), never half of each."""
    kept = unchanged or Unchanged()
    of_it = of_document(dataset_id, document_id).equal
    members = (Where(equal=(("version", version),)), *([Where(ids=tuple(map(point_id, kept.ids)))] if kept.ids else []))
    moved = {point_id(i): position for i, position in kept.moved.items()}
    return [
        *([Reposition(moved)] if moved else []),
        SetPayload(
            Where(equal=(*of_it, ("enabled", YES)), any_of=members),
            {"version": version, "published": YES, SEARCHABLE_IN: dataset_id},
        ),
        SetPayload(Where(equal=(*of_it, ("enabled", NO)), any_of=members), {"version": version, "published": YES}),
        Remove(Where(equal=of_it, not_equal=(("version", version),))),
        orphaned_questions(dataset_id, document_id, kept.ids),
    ]


def restoration(dataset_id: str, document_id: str, version: int, kept: Sequence[StoredParagraph]) -> list[Step]:
    """Undo a publication of ``version`` that stopped part-way: its own points searchable no
    more, then the ``kept`` paragraphs back to the version and place they had (as read before
    it began), so the served version is whole again and the version can be dropped."""
    of_it = of_document(dataset_id, document_id).equal
    kept_ids = tuple(point_id(p.id) for p in kept)
    by_version: dict[int, list[str]] = {}
    for paragraph in kept:
        by_version.setdefault(paragraph.version, []).append(point_id(paragraph.id))
    return [
        SetPayload(
            Where(equal=(*of_it, ("version", version)), except_ids=kept_ids),
            {"published": NO, SEARCHABLE_IN: NOT_SEARCHABLE},
        ),
        *(SetPayload(Where(equal=of_it, ids=tuple(ids)), {"version": v}) for v, ids in sorted(by_version.items())),
        *([Reposition({point_id(p.id): p.position for p in kept})] if kept else []),
    ]


def of_served(dataset_id: str, document_id: str) -> Where:
    """The document's published points, whatever their version: what a new version may keep."""
    return Where(equal=(*of_document(dataset_id, document_id).equal, ("published", YES)))


def enabling(dataset_id: str, paragraph_ids: Collection[str], enabled: bool) -> list[Step]:
    """Disable: never searchable. Enable: searchable again only if its version is published."""
    ids = tuple(point_id(i) for i in paragraph_ids)
    own = Where(equal=(("dataset_id", dataset_id),), ids=ids)
    if not enabled:
        return [SetPayload(own, {"enabled": NO, SEARCHABLE_IN: NOT_SEARCHABLE})]
    published = Where(equal=(("dataset_id", dataset_id), ("published", YES)), ids=ids)
    return [SetPayload(own, {"enabled": YES}), SetPayload(published, {SEARCHABLE_IN: dataset_id})]


# Points stored before versions have no searchable_in: adopted at open as published version 0.
LEGACY = Where(missing=SEARCHABLE_IN)


def adoption(dataset_ids: Iterable[str]) -> list[Step]:
    """Adopt the legacy points of these datasets: searchable, enabled, published version 0."""
    return [
        SetPayload(
            Where(equal=(("dataset_id", d),), missing=SEARCHABLE_IN),
            {"version": 0, "published": YES, "enabled": YES, SEARCHABLE_IN: d},
        )
        for d in sorted(set(dataset_ids))
    ]
