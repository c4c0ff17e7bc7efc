"""Stop in every phase of a question.

A Stop sets the question's stop event; the phases must notice it at once, not when their
upstream call next sends something: a retrieval round can search for seconds without a word,
and the page is promised the answer ends within a second of the Stop. ``until_stopped`` races
each read of a phase's stream against the event. ``PartialRounds`` keeps what the retrieval
loop said about its rounds while they ran, so a record stopped before the loop's result still
shows the rounds that were searched.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import TypeVar

from grpc_stubs.common.v1 import common_pb2

T = TypeVar("T")


async def until_stopped(items: AsyncGenerator[T, None], stop: asyncio.Event) -> AsyncGenerator[T, None]:
    """The items of ``items`` until it ends or ``stop`` is set. On a stop, the read in flight is
    cancelled (the gRPC read or model stream under it with it) and this ends quietly: the caller
    looks at ``stop`` to tell a stopped phase from a finished one. Errors of ``items`` pass, and
    so does the caller's own cancellation (a client gone), which cancels the read too.

    Items are read in the caller's task, and a stop cancels that task only while it is reading
    (as ``asyncio.timeout`` does, undone with ``uncancel``): one waiter per phase instead of a
    task and a wait per item, which cost more than the item itself in an answer's stream."""
    if stop.is_set():
        await items.aclose()
        return
    task = asyncio.current_task()
    assert task is not None
    cancelling = task.cancelling()
    reading = interrupted = False

    def interrupt(_: object) -> None:
        nonlocal interrupted
        if reading and not interrupted:
            interrupted = True
            task.cancel()

    stopped = asyncio.ensure_future(stop.wait())
    stopped.add_done_callback(interrupt)
    try:
        while not stop.is_set():
            reading = True
            try:
                item = await anext(items)
            except StopAsyncIteration:
                return
            except asyncio.CancelledError:
                if interrupted and task.uncancel() <= cancelling:
                    return  # stopped: the read was cancelled, and with it ``items``
                raise
            finally:
                reading = False
            if interrupted:  # the read finished despite the cancel: undo it, the stop still wins
                task.uncancel()
                return
            yield item
    finally:
        stopped.remove_done_callback(interrupt)
        stopped.cancel()
        await items.aclose()  # the read is over, so ``items`` is no longer running


class PartialRounds:
    """The retrieval rounds as the loop's progress events describe them (queries, then the
    verdict), for a record whose retrieval was stopped before its result arrived."""

    def __init__(self) -> None:
        self._rounds: dict[int, common_pb2.RoundTrace] = {}

    def note(self, progress: common_pb2.Progress) -> None:
        if progress.HasField("retrieving"):
            step = self._round(progress.retrieving.round)
            step.queries.extend(progress.retrieving.queries or [progress.retrieving.query])
        elif progress.HasField("assessed"):
            step = self._round(progress.assessed.round)
            step.sufficient, step.missing = progress.assessed.sufficient, progress.assessed.missing

    def _round(self, number: int) -> common_pb2.RoundTrace:
        if number not in self._rounds:
            self._rounds[number] = common_pb2.RoundTrace(round=number)
        return self._rounds[number]

    def result(self) -> common_pb2.RetrievalResult | None:
        """What is known of the stopped retrieval; None when no round had started."""
        if not self._rounds:
            return None
        rounds = [self._rounds[n] for n in sorted(self._rounds)]
        return common_pb2.RetrievalResult(rounds=rounds, missing=rounds[-1].missing)
