"""The one interface for the four model jobs: rewrite, assess, summarize, generate (streamed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from kbcore.errors import Unavailable
from kbcore.models.failures import FailureKind, reported
from kbcore.models.scrub import shown


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class EvidenceParagraph:
    id: str
    document_name: str
    title: str
    content: str


@dataclass(frozen=True)
class HistoryTurn:
    question: str
    answer: str


@dataclass(frozen=True)
class SupportQuote:
    """One evidence sentence quoted under a question part, with the paragraph it comes from."""

    paragraph_id: str
    document_name: str
    sentence: str
    score: float


class PartVerdict(StrEnum):
    """What the evidence says about one part of the question; the values are the wire names
    of ``kb.common.v1.PartVerdict``."""

    VERIFIED = "verified"  # the quotes answer the part
    NEAREST = "nearest"  # not verified: the quotes are only the closest evidence
    UNVERIFIABLE = "unverifiable"  # not verified, and nothing to quote


@dataclass(frozen=True)
class PartSupport:
    """A part of the question and the sentences that answer it (or, unverified, come nearest).

    Decided where the embedder is (the retrieval service) and carried to generation, so the
    offline answer quotes what the assessment judged, without a second copy of the model."""

    part: str
    quotes: tuple[SupportQuote, ...]
    verified: bool = True  # False: the quotes are only the nearest evidence, and the part is unverifiable

    @property
    def verdict(self) -> PartVerdict:
        """The part's verdict, decided here only, so the record, the pages and the API read it
        instead of the answer's wording. Verified with nothing quoted has nothing to show for it,
        so it reads as unverifiable."""
        if not self.quotes:
            return PartVerdict.UNVERIFIABLE
        return PartVerdict.VERIFIED if self.verified else PartVerdict.NEAREST


@dataclass(frozen=True)
class GenerationRequest:
    """What generation needs: the prompt as a remote model sees it, plus the parts it was built from."""

    messages: Sequence[ChatMessage]  # system, history in order, then the current user prompt
    question: str  # as the user asked it
    problem_text: str  # the standalone (rewritten) question
    evidence: Sequence[EvidenceParagraph]
    sufficient: bool
    stop_reason: str
    missing: str
    max_tokens: int | None = None
    support: Sequence[PartSupport] = ()  # per question part, from the retrieval result (offline model)


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ModelError(Unavailable):
    """A model call that produced no usable result (unreachable, error status, truncated,
    malformed). The caller retries later or reports the model down.

    Its message (``str``) is its kind's fixed sentence, so whatever carries it on (a record, a
    gRPC status, an export) never shows the endpoint's own words or address; ``detail`` says
    what happened, without the key, and is logged here, where the failure is known."""

    def __init__(self, detail: str, kind: FailureKind = FailureKind.UNUSABLE, *, secret: str | None = None) -> None:
        self.kind = kind
        self.detail = shown(detail, secret)
        super().__init__(reported(kind, self.detail))


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of a reasoning model's thinking (``reasoning_content``), streamed before its
    answer: shown to the reader apart from the answer, kept with the record, never part of the
    answer text nor of later turns' history."""

    text: str


@dataclass
class GenerationStream:
    """Deltas of an answer (answer text as ``str``, thinking as ``ReasoningDelta``); ``usage``
    is filled in once the stream has ended."""

    deltas: AsyncIterator[str | ReasoningDelta]
    usage: Usage = field(default_factory=Usage)


class EvidenceMatcher(Protocol):
    """Similarity of question parts to evidence paragraphs by meaning (the deployment's embedder)."""

    async def similarities(self, parts: Sequence[str], evidence: Sequence[EvidenceParagraph]) -> list[list[float]]:
        """One row per part, one cosine per paragraph; a paragraph without a vector scores 0."""
        ...

    async def affinities(self, terms: Sequence[str], names: Sequence[str]) -> list[list[float]]:
        """One row per short term (a thing a question asks about), one cosine per document name:
        how near the thing is to what the document is about ("高寿补助" to "高龄老人生活津贴发放
        实施办法", unlike "咖啡厅" to the library's lending rules)."""
        ...


@runtime_checkable
class EvidenceJudge(Protocol):
    """A model that says which evidence sentences answer which part (the offline model).

    The retrieval loop asks it after each round: when it verifies every part, the round needs
    no assessment call, and while it still has follow-up queries to propose, they are searched
    before the model is asked; a compound question's parts are searched in the first round; and
    its verdict on the final evidence goes to generation when it is the answering model too."""

    async def support(
        self, question: str, history: Sequence[ChatMessage], evidence: Sequence[EvidenceParagraph]
    ) -> list[PartSupport]: ...

    async def part_queries(self, question: str, history: Sequence[ChatMessage]) -> list[str]:
        """Each part of the standalone question as a query of its own (one for a simple question)."""
        ...

    async def reading(self, question: str, rewrite: str, evidence: Sequence[EvidenceParagraph]) -> str:
        """The standalone question the first round's evidence supports: ``rewrite``, ``question``
        as asked, or the question with only the lent words the evidence holds."""
        ...

    async def verdict(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        """The assessment JSON this judge gives the evidence (as ``ModelClient.assess``), made
        locally: no model call is counted for it."""
        ...


class ModelClient(Protocol):
    model_name: str
    is_offline: bool

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str: ...

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        """Raw JSON text ``{sufficient, missing, queries}``; validating it is the caller's job."""
        ...

    async def summarize(self, previous_summary: str, turns: Sequence[HistoryTurn]) -> str: ...

    def generate(self, request: GenerationRequest) -> GenerationStream: ...

    async def aclose(self) -> None: ...
