"""Waiting for something another task, thread or process makes true: the suite's one poll loop.

A test that sleeps a fixed time either waits longer than it needs or fails on a slow machine;
one that polls stops as soon as the condition holds and, when it never does, says what it saw
last, so a timeout reads as a finding rather than a bare ``assert False``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast, overload

T = TypeVar("T")

INTERVAL = 0.02
TIMEOUT = 10.0


def _truthy(value: object) -> bool:
    return bool(value)


def passed(_: object) -> bool:
    """``holds`` for a probe that asserts: it has come about once the probe returns at all."""
    return True


class _Poll:
    """One wait: its deadline, and what its probe last gave (a value, or the AssertionError it
    raised: a probe that asserts has simply not come about yet)."""

    def __init__(self, holds: Callable[[Any], object], timeout: float, what: str) -> None:
        self.holds = holds
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.what = what
        self.seen: object = "nothing"
        self.error: AssertionError | None = None

    def came_about(self, outcome: Any) -> bool:
        self.seen = outcome
        self.error = outcome if isinstance(outcome, AssertionError) else None
        return self.error is None and bool(self.holds(outcome))

    def fail_if_late(self) -> None:
        if time.monotonic() >= self.deadline:
            seen = f"{type(self.seen).__name__}: {self.seen}" if self.error else repr(self.seen)
            message = f"{self.what} did not come about within {self.timeout:g} s; last seen: {seen}"
            raise AssertionError(message) from self.error


@overload
async def eventually(
    probe: Callable[[], Awaitable[T]],
    holds: Callable[[T], object] = ...,
    *,
    timeout: float = ...,
    interval: float = ...,
    what: str = ...,
) -> T: ...


@overload
async def eventually(
    probe: Callable[[], T],
    holds: Callable[[T], object] = ...,
    *,
    timeout: float = ...,
    interval: float = ...,
    what: str = ...,
) -> T: ...


async def eventually(
    probe: Callable[[], Any],
    holds: Callable[[Any], object] = _truthy,
    *,
    timeout: float = TIMEOUT,
    interval: float = INTERVAL,
    what: str = "the condition",
) -> Any:
    """Call ``probe`` (plain or async) every ``interval`` until ``holds`` its value (truthy by
    default) and return that value; past ``timeout``, fail with the last value or assertion."""
    poll = _Poll(holds, timeout, what)
    while True:
        try:
            outcome = probe()
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except AssertionError as failed:
            outcome = failed
        if poll.came_about(outcome):
            return outcome
        poll.fail_if_late()
        await asyncio.sleep(interval)


def eventually_sync(
    probe: Callable[[], T],
    holds: Callable[[T], object] = _truthy,
    *,
    timeout: float = TIMEOUT,
    interval: float = INTERVAL,
    what: str = "the condition",
) -> T:
    """``eventually`` where there is no event loop to yield to (a synchronous test or fixture)."""
    poll = _Poll(holds, timeout, what)
    while True:
        try:
            outcome: Any = probe()
        except AssertionError as failed:
            outcome = failed
        if poll.came_about(outcome):
            return cast(T, outcome)
        poll.fail_if_late()
        time.sleep(interval)
