"""The per-question dataset check remembers what exists for seconds, never what does not."""

from __future__ import annotations

from services.retrieval.catalog.known_ids import MAX_KNOWN, KnownIds


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_found_ids_are_known_until_the_ttl_passes_and_unknown_ones_are_never_remembered() -> None:
    clock = Clock()
    known = KnownIds(ttl=5.0, clock=clock)
    assert known.unknown(["a", "b"]) == ["a", "b"]
    known.found(["a"])
    assert known.unknown(["a", "b"]) == ["b"]
    clock.now += 4.9
    assert known.unknown(["a", "b"]) == ["b"]
    clock.now += 0.2
    assert known.unknown(["a", "b"]) == ["a", "b"]


def test_a_forgotten_id_is_looked_up_again_at_once() -> None:
    known = KnownIds(ttl=5.0, clock=Clock())
    known.found(["a", "b"])
    known.forget("a")
    known.forget("never-seen")
    assert known.unknown(["a", "b"]) == ["a"]


def test_the_memory_is_bounded() -> None:
    clock = Clock()
    known = KnownIds(ttl=5.0, clock=clock)
    known.found(str(i) for i in range(MAX_KNOWN))
    known.found(["new"])
    assert known.unknown(["new"]) == []
    assert len(known._until) <= MAX_KNOWN
