"""The model's answer read by a task of its own, so that what arrives while the last message is
being sent goes on as one message.

At 64 chats at once the chat service and the gateway spent most of their CPU per message of the
answer stream, one per model delta (issue 18). A pump reads the deltas into a buffer as they
arrive; the sender takes everything buffered at once. When the machine keeps up, the sender is
waiting before the next delta arrives, so every batch is one delta, as before; under load,
the deltas that arrived during a send go in the next one together. Only the timing of the
sending changes: the client still gets one answer chunk per delta.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

from kbcore.models.base import ReasoningDelta

Delta = str | ReasoningDelta


def has_text(delta: Delta) -> bool:
    return bool(delta.text if isinstance(delta, ReasoningDelta) else delta)


class DeltaPump:
    """Starts reading ``deltas`` at once (the model request goes out now); ``batches()`` gives
    the non-empty ones in order, a batch being all that arrived since the last; ``aclose()``
    stops the reading (the model stream's own closing is the caller's)."""

    def __init__(self, deltas: AsyncIterator[Delta]) -> None:
        self._deltas = deltas
        self._buffer: list[Delta] = []
        self._ended = False
        self._error: Exception | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            async for delta in self._deltas:
                if has_text(delta):
                    self._buffer.append(delta)
                    self._wake()
        except Exception as exc:  # raised to the reader after the deltas that came before it
            self._error = exc
        finally:
            self._ended = True
            self._wake()

    def _wake(self) -> None:
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def batches(self) -> AsyncGenerator[list[Delta], None]:
        while True:
            if not self._buffer and not self._ended:
                self._wakeup = asyncio.get_running_loop().create_future()
                try:
                    await self._wakeup
                finally:
                    self._wakeup = None
            if self._buffer:
                batch, self._buffer = self._buffer, []
                yield batch
            elif self._ended:
                if self._error is not None:
                    raise self._error
                return

    async def aclose(self) -> None:
        """Stop reading: cancels the read in flight (the model stream under it with it)."""
        self._task.cancel()  # a no-op once it has ended
        await asyncio.wait({self._task})  # never raises for the pump's end; the caller's own cancellation does
