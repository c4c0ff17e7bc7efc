"""The shard a store reads from, replaceable while reads are running on it.

Index maintenance swaps a store's shard for a freshly indexed one while searches run in worker
threads. A search takes the shard with :meth:`ShardSlot.borrow`, so the swap can wait until the
last search on the old shard has returned before closing it: no search ever runs on a closed
shard, and none waits for the swap (the slot's lock is held for a counter update only).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

T = TypeVar("T")


class ClosedStoreError(RuntimeError):
    """The store was closed; nothing can be read from it any more."""


class ShardSlot(Generic[T]):
    def __init__(self, value: T, name: str) -> None:
        self._value: T | None = value
        self._name = name
        self._borrowed: dict[int, int] = {}  # id(value) -> reads in flight
        self._changed = threading.Condition(threading.Lock())

    def current(self) -> T:
        """The value now in the slot, for a caller that already excludes a swap (the writer)."""
        value = self._value
        if value is None:
            raise ClosedStoreError(f"vector store at {self._name} is closed")
        return value

    @contextmanager
    def borrow(self) -> Iterator[T]:
        """The current value, which is not closed before the block ends."""
        with self._changed:
            value = self.current()
            key = id(value)
            self._borrowed[key] = self._borrowed.get(key, 0) + 1
        try:
            yield value
        finally:
            with self._changed:
                left = self._borrowed[key] - 1
                if left:
                    self._borrowed[key] = left
                else:
                    del self._borrowed[key]
                    self._changed.notify_all()

    def replace(self, value: T | None) -> T | None:
        """Put ``value`` in the slot (None: closed); returns what was there. Reads that already
        borrowed the old value keep it: call :meth:`wait_returned` before closing it."""
        with self._changed:
            old, self._value = self._value, value
            return old

    def wait_returned(self, value: T) -> None:
        """Block until no read borrows ``value`` any more."""
        with self._changed:
            self._changed.wait_for(lambda: id(value) not in self._borrowed)
