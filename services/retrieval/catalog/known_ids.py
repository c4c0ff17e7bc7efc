"""Ids recently found to exist, remembered for a few seconds.

Every question's Retrieve checks its application's datasets exist; on SQLite that check cost
more of the retrieval service's CPU per question than the search itself at small scale.
Existence only matters for the refusal (NOT_FOUND): a dataset deleted by this
process is forgotten at once, and one deleted through another retrieval process (or checked
while this one's delete commits) is still searched, finding nothing since its paragraphs are
gone, for at most ``ttl`` seconds. An id not
found is never remembered, so a dataset created a moment ago is usable at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

KNOWN_TTL_SECONDS = 5.0
MAX_KNOWN = 4096  # a bound, not a working-set size: applications name a handful of datasets


class KnownIds:
    def __init__(self, ttl: float = KNOWN_TTL_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._until: dict[str, float] = {}  # id → when the finding expires

    def unknown(self, ids: Iterable[str]) -> list[str]:
        """The ids not found to exist within the last ``ttl`` seconds (to be looked up)."""
        now = self._clock()
        return [i for i in ids if self._until.get(i, 0.0) <= now]

    def found(self, ids: Iterable[str]) -> None:
        now = self._clock()
        if len(self._until) >= MAX_KNOWN:
            self._until = {i: t for i, t in self._until.items() if t > now}
            if len(self._until) >= MAX_KNOWN:
                self._until.clear()
        for i in ids:
            self._until[i] = now + self._ttl

    def forget(self, id_: str) -> None:
        self._until.pop(id_, None)
