"""The vector-store contract every backend honours; the contract tests hold both to it."""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Self


class SearchMode(enum.StrEnum):
    VECTOR = "vector"
    KEYWORD = "keyword"
    HYBRID = "hybrid"


# The payload fields of a paragraph that hold text, as ``ParagraphPayload`` names them.
_TEXT_FIELDS = ("dataset_id", "document_id", "document_name", "title", "content")


@dataclass(frozen=True)
class ParagraphPayload:
    """A paragraph's own fields, as its point's payload stores them and every read of a point
    gives them back. Declared once, so that writing a paragraph (``ParagraphPoint``), finding it
    (``Hit``) and managing it (``StoredParagraph``) cannot disagree on one field; each adds what
    only it has (a vector, a score, its version and states). The id is the point's own, not a
    payload field."""

    id: str  # a UUID string, stable across re-ingestion of the same document
    dataset_id: str
    document_id: str
    document_name: str
    title: str
    content: str
    position: int  # order of the paragraph inside its document

    def to_payload(self) -> dict[str, Any]:
        """These fields as a point's payload holds them (``layout.payload`` adds the states)."""
        return {**{name: getattr(self, name) for name in _TEXT_FIELDS}, "position": self.position}

    @classmethod
    def from_payload(cls, raw_id: object, payload: Mapping[str, Any] | None, **own: Any) -> Self:
        """``cls`` read from a stored point of any backend (its id comes back as a UUID object
        from edge, a str from the client): these fields from ``payload``, empty where the point
        has none, and ``own`` the fields only ``cls`` has."""
        data = payload or {}
        text = {name: str(data.get(name, "")) for name in _TEXT_FIELDS}
        return cls(id=str(raw_id), position=int(data.get("position", 0)), **text, **own)


@dataclass(frozen=True)
class ParagraphPoint(ParagraphPayload):
    """One paragraph as stored: its text, where it came from, its dense vector, and its state.

    A document is written as a numbered ``version``: ingestion stores a new version *staged*
    (``searchable=False``) and publishes it once complete, so a search never sees half of it.
    ``enabled=False`` is an operator's decision that the paragraph must never be retrieved.
    The defaults describe a published, enabled paragraph, what every point was before versions.
    """

    vector: Sequence[float]  # normalised dense embedding
    version: int = 0  # ids must differ between versions, or staging one overwrites the live one
    searchable: bool = True  # False: staged, invisible to searches until ``publish_version``
    enabled: bool = True


@dataclass(frozen=True)
class Hit(ParagraphPayload):
    """A paragraph a search found, with how well it matched."""

    score: float  # cosine for vector, BM25 for keyword, fused rank score for hybrid
    version: int = 0  # lets ``layout.ranked`` drop an older version seen while one is published
    matched_question: str = ""  # the attached question that brought it in (its score is that match's)


@dataclass(frozen=True)
class StoredParagraph(ParagraphPayload):
    """A paragraph as an operator manages it: what is stored, without vectors or scores."""

    version: int
    enabled: bool


@dataclass(frozen=True)
class Unchanged:
    """The served paragraphs a new version of their document keeps as they are: same document
    name, title and text, hence the same vector. They keep their ids (and their enabled state);
    ``moved`` gives the new position of those whose place in the document changed."""

    ids: frozenset[str] = frozenset()
    moved: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionPoint:
    """A question an operator attached to a paragraph, stored beside the paragraphs with its
    query embedding: a visitor asking it, or nearly it, finds the paragraph even when the
    paragraph's own words are far from the question's (docs/retrieval.md, "Questions on paragraphs")."""

    id: str  # a UUID string of its own, never a paragraph's
    dataset_id: str
    document_id: str  # the paragraph's document: deleting or re-importing it settles its questions
    paragraph_id: str
    content: str
    vector: Sequence[float]  # the question embedded as a query, as a visitor's question is


@dataclass(frozen=True)
class AttachedQuestion:
    """An attached question as an operator manages it: without its vector."""

    id: str
    dataset_id: str
    document_id: str
    paragraph_id: str
    content: str


@dataclass(frozen=True)
class QuestionMatch:
    """An attached question close to what was asked: ``score`` is the cosine of the two."""

    question: AttachedQuestion
    score: float


@dataclass(frozen=True)
class SearchQuery:
    dataset_ids: tuple[str, ...]  # never empty: the caller decides what an empty list means
    text: str
    vector: Sequence[float] | None  # required for vector and hybrid
    mode: SearchMode
    limit: int
    similarity: float  # threshold on the dense cosine score (vector part only)


class VectorStore(Protocol):
    # Which store this is: ingestion jobs are claimed only by processes writing to the same one.
    identity: str

    async def upsert(self, points: Sequence[ParagraphPoint]) -> None: ...

    async def delete_document(self, dataset_id: str, document_id: str, keep_ids: Collection[str] = ()) -> None:
        """Delete the document's points, except ``keep_ids`` (re-ingestion prunes what is stale),
        and the questions attached to the paragraphs deleted."""
        ...

    async def delete_dataset(self, dataset_id: str) -> None: ...

    async def search(self, query: SearchQuery) -> list[Hit]: ...

    async def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these paragraphs (unknown ids left out): comparing a
        question with evidence it already has costs no embedding of the evidence again."""
        ...

    async def count(self, dataset_id: str | None = None, document_id: str | None = None) -> int:
        """Every stored point, staged and disabled ones too: what is counted here is what
        occupies the store, which is how orphans are found."""
        ...

    async def publish_version(
        self, dataset_id: str, document_id: str, version: int, unchanged: Unchanged | None = None
    ) -> None:
        """Make the version's enabled points, and the ``unchanged`` paragraphs it keeps from the
        served version, its searchable points in one write, then delete every other version of
        the document, and last the questions attached to paragraphs it did not keep. Between the writes a search may see both versions; ``layout.ranked`` keeps
        only the newer one's hits. A version with no points leaves the document empty."""
        ...

    async def drop_version(self, dataset_id: str, document_id: str, version: int) -> None:
        """Delete one version's points (a failed or cancelled job), whatever their state."""
        ...

    async def restore_served(
        self, dataset_id: str, document_id: str, version: int, kept: Sequence[StoredParagraph]
    ) -> None:
        """Undo a ``publish_version`` of ``version`` that failed part-way: its own points stop
        being searchable and the ``kept`` paragraphs (as read before publishing) get back their
        version and position, so the served version is whole again until ``drop_version``."""
        ...

    async def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are stored (returned as given): a resumed job skips what it wrote.
        Every id must be a UUID (ValueError otherwise), as for ``upsert``."""
        ...

    async def document_paragraphs(self, dataset_id: str, document_id: str, version: int) -> list[StoredParagraph]:
        """Every point of one version of the document, by position (then id)."""
        ...

    async def served_paragraphs(self, dataset_id: str, document_id: str) -> list[StoredParagraph]:
        """Every published point of the document, whatever its version, by position (then id):
        what a new version of it may keep instead of embedding again."""
        ...

    async def paragraph(self, paragraph_id: str) -> StoredParagraph | None:
        """One paragraph, or None if it is not stored (or ``paragraph_id`` is not a UUID)."""
        ...

    async def set_enabled(self, dataset_id: str, paragraph_ids: Collection[str], enabled: bool) -> None:
        """Disable (never retrieved) or enable paragraphs of the dataset; others' ids are ignored.
        Enabling a staged paragraph does not publish it: it becomes searchable with its version."""
        ...

    async def delete_points(self, paragraph_ids: Collection[str]) -> None:
        """Delete these paragraphs or attached questions (unknown ids are ignored). A deleted
        paragraph's questions go with it."""
        ...

    async def upsert_questions(self, questions: Sequence[QuestionPoint]) -> None:
        """Store attached questions (by id: an existing one is replaced). They are never
        returned by ``search``, ``paragraph`` or a document's paragraphs, only by the question
        calls below."""
        ...

    async def questions(
        self,
        dataset_id: str,
        *,
        paragraph_ids: Collection[str] | None = None,
        document_id: str | None = None,
        question_ids: Collection[str] | None = None,
    ) -> list[AttachedQuestion]:
        """The dataset's attached questions (of these paragraphs, of this document, these
        ones), by paragraph then text."""
        ...

    async def match_questions(
        self, dataset_ids: Sequence[str], vector: Sequence[float], limit: int, similarity: float
    ) -> list[QuestionMatch]:
        """The attached questions of these datasets whose cosine to ``vector`` is above
        ``similarity``, best first, at most ``limit``."""
        ...

    async def searchable_hits(self, dataset_ids: Sequence[str], paragraph_ids: Sequence[str]) -> dict[str, Hit]:
        """These paragraphs as search hits (score 0), for those that a search of the datasets
        could return now: published and enabled. Others (and unknown ids) are left out."""
        ...

    async def check_room(self) -> None:
        """Raise ``kbcore.errors.StorageFull`` if the store's disk has no room for writes now:
        callers that change SQL before the store ask first, so a full disk leaves both as they
        were (the store refuses such writes itself in any case)."""
        ...

    async def close(self) -> None: ...
