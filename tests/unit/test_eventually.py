"""The suite's poll loop returns what it waited for as soon as it holds, and a wait that never
ends says what it saw last."""

from __future__ import annotations

import itertools

import pytest

from tests.eventually import eventually, eventually_sync


async def test_returns_the_first_value_that_holds_from_a_plain_or_async_probe() -> None:
    counter = itertools.count()
    assert await eventually(lambda: next(counter), lambda n: n >= 3, interval=0) == 3

    async def later() -> int:
        return next(counter)

    assert await eventually(later, lambda n: n >= 6, interval=0) == 6


async def test_a_probe_that_asserts_has_not_come_about_yet() -> None:
    counter = itertools.count()

    def ready() -> int:
        n = next(counter)
        assert n >= 2, f"only {n}"
        return n

    assert await eventually(ready, interval=0) == 2


async def test_a_timeout_names_the_wait_and_the_last_value_seen() -> None:
    with pytest.raises(AssertionError, match=r"the queue emptying did not come about within 0.05 s; last seen: \[7\]"):
        await eventually(lambda: [7], lambda q: not q, timeout=0.05, what="the queue emptying")


def test_a_timeout_carries_the_last_assertion_of_the_probe() -> None:
    def never() -> None:
        raise AssertionError("still 3 running")

    with pytest.raises(AssertionError, match="last seen: AssertionError: still 3 running") as failed:
        eventually_sync(never, timeout=0.05)
    assert isinstance(failed.value.__cause__, AssertionError)
