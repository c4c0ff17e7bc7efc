"""The one interface for the four model jobs: rewrite, assess, summarize, generate (streamed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kbcore.errors import Unavailable


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


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ModelError(Unavailable):
    """A model call that produced no usable result (unreachable, error status, truncated,
    malformed); the message says which. The caller retries later or reports the model down."""


@dataclass
class GenerationStream:
    """Deltas of an answer; ``usage`` is filled in once the stream has ended."""

    deltas: AsyncIterator[str]
    usage: Usage = field(default_factory=Usage)


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
