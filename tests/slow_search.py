"""A search that never finishes, for the tests of Stop during a retrieval round: the
real embedder, except that a query is never embedded, so a hybrid or vector search waits until
its call is cancelled, as a search on an overloaded store would."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from services.retrieval.embedding.embedders import Embedder
from tests.harness import Stack, start_stack


class SlowSearchEmbedder:
    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.searching = asyncio.Event()  # a search has started
        self.cancelled = asyncio.Event()  # and was called off

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._inner.embed_passages(texts)

    async def embed_query(self, text: str) -> list[float]:
        self.searching.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable: nothing sets the event")

    async def close(self) -> None:
        pass


async def start_slow_search_stack(
    stack: Stack, sessions: Any, store: Any, embedder: Embedder, model: Any
) -> tuple[Stack, SlowSearchEmbedder]:
    """A stack on ``stack``'s data (the demo application searches in hybrid mode) whose searches
    never finish."""
    slow = SlowSearchEmbedder(embedder)
    running = await start_stack(stack.settings, sessions=sessions, store=store, embedder=slow, model=model)
    return running, slow
