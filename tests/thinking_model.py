"""A reasoning model for tests: the real remote-model client against the local OpenAI-protocol
fake, with a scripted thinking streamed as ``ReasoningDelta`` before each answer (as a
DeepSeek-style endpoint's ``reasoning_content`` reaches the chat service). The fake still
records every request, so tests can assert what later turns sent to the model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.models.base import (
    ChatMessage,
    EvidenceParagraph,
    GenerationRequest,
    GenerationStream,
    HistoryTurn,
    ModelClient,
    ReasoningDelta,
)
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.store.base import VectorStore
from tests.e2e.conftest import ANSWER_CHUNKS
from tests.fakes.openai_server import ChatReply, FakeOpenAI, client_for, plausible_route
from tests.harness import Stack, start_stack

THINKING = ("用户问的是探视时间和报销比例，", "两部分都要在资料里找到依据；", "先答ICU，再答医保。")


class ThinkingModel:
    """``inner`` with ``thinking`` streamed before every generated answer; the other jobs and the
    usage (filled in place by ``inner``'s stream) are ``inner``'s own."""

    def __init__(self, inner: ModelClient, thinking: Sequence[str] = THINKING) -> None:
        self._inner = inner
        self.thinking = list(thinking)
        self.model_name = inner.model_name
        self.is_offline = inner.is_offline

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        return await self._inner.rewrite(history, question)

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        return await self._inner.assess(question, history, evidence, searched)

    async def summarize(self, previous_summary: str, turns: Sequence[HistoryTurn]) -> str:
        return await self._inner.summarize(previous_summary, turns)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def generate(self, request: GenerationRequest) -> GenerationStream:
        answer = self._inner.generate(request)

        async def deltas() -> AsyncIterator[str | ReasoningDelta]:
            for piece in self.thinking:
                yield ReasoningDelta(piece)
            async for delta in answer.deltas:
                yield delta

        return GenerationStream(deltas(), answer.usage)


@asynccontextmanager
async def thinking_stack(
    data: Stack,
    fake: FakeOpenAI,
    sessions: async_sessionmaker[AsyncSession],
    store: VectorStore,
    embedder: Embedder,
) -> AsyncIterator[Stack]:
    """A stack on ``data``'s demo data answered by a reasoning model (``THINKING``, then
    ``ANSWER_CHUNKS``). The fake sends no usage, so the record's token counts are the estimate,
    which must count the answer and not the thinking."""
    fake.reset()
    fake.default = plausible_route(lambda: ChatReply.stream(ANSWER_CHUNKS, include_usage=False))
    model = ThinkingModel(client_for(fake, disable_thinking=True))
    running = await start_stack(data.settings, sessions=sessions, store=store, embedder=embedder, model=model)
    try:
        yield running
    finally:
        await running.stop()
        await model.aclose()
