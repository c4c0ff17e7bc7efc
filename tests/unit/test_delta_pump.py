"""The answer's deltas go on one by one while the sender keeps up, together when they
arrived during a send, and paced under load; nothing is lost, reordered or invented, errors come after what preceded
them, and closing stops the model stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kbcore.models.base import ModelError, ReasoningDelta
from services.chat.answering.delta_pump import Delta, DeltaPump, Pacing, joined


class Model:
    """A model stream whose deltas the test releases one at a time."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Delta | BaseException | None] = asyncio.Queue()
        self.closed = False

    async def deltas(self) -> AsyncIterator[Delta]:
        try:
            while (item := await self.queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.closed = True


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_sender_that_keeps_up_gets_one_delta_at_a_time() -> None:
    model = Model()
    pump = DeltaPump(model.deltas())
    batches = pump.batches()
    for text in ("一", "二", "三"):
        model.queue.put_nowait(text)
        assert await anext(batches) == [text]
    model.queue.put_nowait(None)
    with pytest.raises(StopAsyncIteration):
        await anext(batches)
    await pump.aclose()


async def test_deltas_that_arrive_during_a_send_go_together_in_order_without_empty_ones() -> None:
    model = Model()
    pump = DeltaPump(model.deltas())
    batches = pump.batches()
    model.queue.put_nowait("一")
    assert await anext(batches) == ["一"]
    # The sender is busy: three deltas (and an empty one) arrive meanwhile.
    for item in (ReasoningDelta("想"), "", "二", "三"):
        model.queue.put_nowait(item)
    await _settle()
    assert await anext(batches) == [ReasoningDelta("想"), "二", "三"]  # unpaced: one entry per delta
    model.queue.put_nowait(None)
    assert [b async for b in batches] == []
    await pump.aclose()


async def test_an_error_comes_after_the_deltas_before_it() -> None:
    model = Model()
    pump = DeltaPump(model.deltas())
    batches = pump.batches()
    model.queue.put_nowait("部分")
    model.queue.put_nowait(ModelError("the model failed"))
    await _settle()
    assert await anext(batches) == ["部分"]
    with pytest.raises(ModelError):
        await anext(batches)
    await pump.aclose()


async def test_closing_stops_the_model_stream_while_it_waits() -> None:
    model = Model()
    pump = DeltaPump(model.deltas())
    model.queue.put_nowait("一")
    await _settle()
    await pump.aclose()
    assert model.closed


def test_runs_of_one_kind_are_joined_in_order() -> None:
    batch: list[Delta] = [ReasoningDelta("想"), ReasoningDelta("一想"), "答", "案", ReasoningDelta("再想"), "。"]
    assert joined(batch) == [ReasoningDelta("想一想"), "答案", ReasoningDelta("再想"), "。"]


async def test_under_load_the_deltas_of_one_interval_go_as_one_and_the_end_is_not_held() -> None:
    pacing = Pacing(interval=0.2, from_streams=2)
    other = DeltaPump(Model().deltas(), pacing)  # a second answer streaming: this process is under load
    model = Model()
    pump = DeltaPump(model.deltas(), pacing)
    assert pacing.gap() == 0.2
    batches = pump.batches()
    model.queue.put_nowait("一")
    assert await anext(batches) == ["一"]  # the first goes at once
    loop = asyncio.get_running_loop()
    sent = loop.time()
    model.queue.put_nowait("二")
    second = asyncio.ensure_future(anext(batches))
    await _settle()
    model.queue.put_nowait("三")  # arrives while the second is held back
    await _settle()
    assert not second.done()
    assert await second == ["二三"]
    assert loop.time() - sent >= 0.19
    model.queue.put_nowait("四")
    model.queue.put_nowait(None)  # the end: sent at once, not after the interval
    started = loop.time()
    assert [b async for b in batches] == [["四"]]
    assert loop.time() - started < 0.1
    await pump.aclose()
    await other.aclose()
    assert pacing.streaming == 0


async def test_below_the_threshold_nothing_is_held_back() -> None:
    pacing = Pacing(interval=5.0, from_streams=2)
    model = Model()
    pump = DeltaPump(model.deltas(), pacing)
    assert pacing.gap() == 0.0
    batches = pump.batches()
    for text in ("一", "二"):
        model.queue.put_nowait(text)
        assert await asyncio.wait_for(anext(batches), 1) == [text]
    await pump.aclose()
    await pump.aclose()  # closing twice counts the answer out once
    assert pacing.streaming == 0
