"""The real embedder inside tests that must know what an ingestion embedded: it counts the
paragraphs it embeds, and can be held before a batch (to stop a job in the middle) or slowed."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from services.retrieval.embedding.embedders import Embedder


class GatedEmbedder:
    """The real embedder, counting what it embeds, that can be held before a batch (to stop a
    job in the middle) and slowed down."""

    def __init__(self, inner: Embedder, pause: float = 0.0, unpaused_batches: int = 0) -> None:
        """``pause`` seconds before each batch but the first ``unpaused_batches``."""
        self._inner = inner
        self.embedded = 0
        self.batches = 0
        self.open = asyncio.Event()
        self.open.set()
        self.pause = pause
        self.unpaused_batches = unpaused_batches

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        await self.open.wait()
        self.batches += 1
        if self.pause and self.batches > self.unpaused_batches:
            await asyncio.sleep(self.pause)
        self.embedded += len(texts)
        return await self._inner.embed_passages(texts)

    async def embed_query(self, text: str) -> list[float]:
        return await self._inner.embed_query(text)

    async def close(self) -> None:
        pass
