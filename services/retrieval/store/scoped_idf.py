"""Scoped IDF of keyword terms, remembered between searches of an embedded shard that is not
being written.

Keyword scores use IDF counted over the searched datasets only (``edge_store``'s module docstring
says why). qdrant-edge computes that scope afresh for every search: it walks the keyword
index of ``searchable_in`` over every point in the scope and builds a membership mask before
it counts a single term. At 100k paragraphs that walk was about half of a hybrid search, and
it is the same walk for every search until the shard changes.

So the store learns the IDF of each term per scope, once, and then asks the engine for IDF
over *no* points: with ``N = df = 0`` the engine's ``ln((N - df + 0.5) / (df + 0.5) + 1)`` is
``ln 2`` for every term, and a query weight of ``idf / ln 2`` restores the scoped figure
(scores within a few float32 rounding steps of the scoped search: 2e-7 relative, same order).

What is remembered is only valid for the shard as it was: every write clears it, and a search
that overlapped a write (the writer runs in a worker thread) is run again the scoped way. This
is a sequence lock: the generation is odd while a write runs and moves on twice per write.
Terms are only learned once writes have been quiet for ``SETTLE_SECONDS``, so that a bulk
load, which clears the table every batch, does not pay for learning it again and again.
"""

from __future__ import annotations

import math
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from services.retrieval.store.sparse import SparseTerms

# The engine's IDF over an empty corpus, as the float32 it multiplies by.
LN2_F32: float = struct.unpack("f", struct.pack("f", math.log(2.0)))[0]
# Writes must have been quiet this long before searches spend engine calls learning terms.
SETTLE_SECONDS = 1.0
# Terms remembered over all scopes; past it the table starts again (a few MB at most).
ENTRY_LIMIT = 200_000
# The weight of a term that no point of the scope holds: any positive number scores the same
# (nothing), and the search stays a well-formed sparse query.
ABSENT_TERM_IDF = 1.0

Scope = tuple[str, ...]


def scope_of(dataset_ids: Sequence[str]) -> Scope:
    """The cache key of a set of datasets: order and repeats do not change the IDF corpus."""
    return tuple(sorted(set(dataset_ids)))


class ScopedIdf:
    """IDF per (scope, term) for the shard's current contents; thread-safe."""

    def __init__(self, settle_seconds: float = SETTLE_SECONDS, entry_limit: int = ENTRY_LIMIT) -> None:
        """``settle_seconds``: quiet time after opening or a write before terms are learned
        (``math.inf``: never, the engine scopes IDF for every search)."""
        self._settle_seconds = settle_seconds
        self._entry_limit = entry_limit
        self._lock = threading.Lock()
        self._generation = 0  # odd while a write is running
        self._settled_from = time.monotonic() + settle_seconds
        self._tables: dict[Scope, dict[int, float]] = {}
        self._entries = 0

    @property
    def generation(self) -> int:
        return self._generation

    def unchanged(self, generation: int) -> bool:
        """No write began since ``generation`` was read (and none was running then)."""
        return generation % 2 == 0 and self._generation == generation

    @contextmanager
    def changing(self) -> Iterator[None]:
        """Around every change to the shard's points: what is remembered is dropped, and searches
        running meanwhile see that they overlapped a write."""
        self._reset(begin=True)
        try:
            yield
        finally:
            self._reset(begin=False)

    def _reset(self, begin: bool) -> None:
        with self._lock:
            self._generation += 1
            self._tables, self._entries = {}, 0
            if not begin:
                self._settled_from = time.monotonic() + self._settle_seconds

    def weighted(self, generation: int, scope: Scope, terms: SparseTerms) -> SparseTerms | None:
        """``terms`` with each weight multiplied by its scoped IDF over ``ln 2``, or None if a
        term has not been learned (or a write is running)."""
        table = self._tables.get(scope) if generation % 2 == 0 else None
        if table is None:
            return None
        values = []
        for index, weight in zip(terms.indices, terms.values, strict=True):
            idf = table.get(index)
            if idf is None:
                return None
            values.append(weight * idf / LN2_F32)
        return SparseTerms(terms.indices, tuple(values))

    def may_learn(self, generation: int) -> bool:
        """Worth learning now: no write running or begun since, and writes have been quiet."""
        return self.unchanged(generation) and time.monotonic() >= self._settled_from

    def missing(self, scope: Scope, terms: SparseTerms) -> list[int]:
        table = self._tables.get(scope, {})
        return [index for index in terms.indices if index not in table]

    def learn(self, generation: int, scope: Scope, idf: dict[int, float]) -> None:
        """Remember what was measured at ``generation``, unless a write has begun since."""
        with self._lock:
            if self._generation != generation:
                return
            if self._entries + len(idf) > self._entry_limit:
                self._tables, self._entries = {}, 0
            table = self._tables.setdefault(scope, {})
            self._entries += len(idf.keys() - table.keys())
            table.update(idf)
