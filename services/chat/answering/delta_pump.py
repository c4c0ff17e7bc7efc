"""The model's answer read by a task of its own, so that what arrives while the last message is
being sent goes on as one message, and, under load, is paced (one message per ``KB_ANSWER_PACING_MS``).

At 64 chats at once the chat service and the gateway spent most of their CPU per message of the
answer stream, one per model delta: a gRPC message, a wake-up of gRPC's poller, an
SSE write and the ASGI middleware around it, each paid in two processes. A pump reads the deltas
into a buffer as they arrive; the sender takes everything buffered at once. When the machine
keeps up, the sender is waiting before the next delta arrives, so every batch is one delta, as
before. Under load (``Pacing``: many answers streaming in this process at once) the sender also
waits until ``Pacing.interval`` has passed since its last message, so one message carries the
deltas of that interval, each run of one kind joined into one (``joined``): the caller sends one
answer chunk for it. The answer's end is never held back. Unpaced, a batch keeps one entry per
model delta, so the caller still sends one answer chunk per delta (in one write).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from kbcore.models.base import ReasoningDelta

Delta = str | ReasoningDelta


def has_text(delta: Delta) -> bool:
    return bool(delta.text if isinstance(delta, ReasoningDelta) else delta)


def joined(batch: Sequence[Delta]) -> list[Delta]:
    """``batch`` with each run of answer text, and each run of thinking, as one delta, in order."""
    out: list[Delta] = []
    for delta in batch:
        last = out[-1] if out else None
        if isinstance(delta, ReasoningDelta) and isinstance(last, ReasoningDelta):
            out[-1] = ReasoningDelta(last.text + delta.text)
        elif isinstance(delta, str) and isinstance(last, str):
            out[-1] = last + delta
        else:
            out.append(delta)
    return out


class Pacing:
    """When answers are paced: from ``from_streams`` answers streaming at once in this process,
    at most one message per ``interval`` seconds each (0 = never paced). One per process, shared
    by its pumps, which count themselves in ``streaming``."""

    def __init__(self, interval: float, from_streams: int) -> None:
        self.interval = interval
        self.from_streams = from_streams
        self.streaming = 0

    def gap(self) -> float:
        """Seconds to leave between two messages of one answer now; 0 = send at once."""
        return self.interval if self.interval > 0 and self.streaming >= self.from_streams else 0.0


NEVER = Pacing(0.0, 1)


class DeltaPump:
    """Starts reading ``deltas`` at once (the model request goes out now); ``batches()`` gives
    the non-empty ones in order, a batch being all that arrived since the last (held back up to
    the pacing gap, and joined, under load); ``aclose()`` stops the reading (the model stream's
    own closing is the caller's)."""

    def __init__(self, deltas: AsyncIterator[Delta], pacing: Pacing = NEVER) -> None:
        self._deltas = deltas
        self._pacing = pacing
        self._buffer: list[Delta] = []
        self._ended = False
        self._error: Exception | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._holding = False  # paced: only the end wakes the sender early
        self._counted = True
        pacing.streaming += 1
        self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            async for delta in self._deltas:
                if has_text(delta):
                    self._buffer.append(delta)
                    if not self._holding:
                        self._wake()
        except Exception as exc:  # raised to the reader after the deltas that came before it
            self._error = exc
        finally:
            self._ended = True
            self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def _wait(self, seconds: float = math.inf) -> None:
        """Until ``_wake`` (or ``seconds`` have passed)."""
        loop = asyncio.get_running_loop()
        self._wakeup = wakeup = loop.create_future()
        timer = loop.call_later(seconds, self._wake) if seconds < math.inf else None
        try:
            await wakeup
        finally:
            self._wakeup = None
            if timer is not None:
                timer.cancel()

    async def batches(self) -> AsyncGenerator[list[Delta], None]:
        loop = asyncio.get_running_loop()
        sent_at = -math.inf
        while True:
            if not self._buffer and not self._ended:
                await self._wait()
            gap = self._pacing.gap()
            hold = sent_at + gap - loop.time()
            if self._buffer and not self._ended and hold > 0:
                self._holding = True
                try:
                    await self._wait(hold)
                finally:
                    self._holding = False
            if self._buffer:
                batch, self._buffer = self._buffer, []
                sent_at = loop.time()
                yield joined(batch) if gap else batch  # unpaced: still one chunk per model delta
            elif self._ended:
                if self._error is not None:
                    raise self._error
                return

    async def aclose(self) -> None:
        """Stop reading: cancels the read in flight (the model stream under it with it)."""
        if self._counted:
            self._counted = False
            self._pacing.streaming -= 1
        self._task.cancel()  # a no-op once it has ended
        await asyncio.wait({self._task})  # never raises for the pump's end; the caller's own cancellation does
