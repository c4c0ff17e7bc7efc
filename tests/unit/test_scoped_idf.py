"""The learned scoped IDF: what it hands out, and that nothing learned outlives a write."""

from __future__ import annotations

import math

from services.retrieval.store.scoped_idf import LN2_F32, ScopedIdf, scope_of
from services.retrieval.store.sparse import SparseTerms

SCOPE = scope_of(["hr", "gov"])
TERMS = SparseTerms((3, 7), (1.0, 2.0))


def learned(idf: dict[int, float]) -> ScopedIdf:
    cache = ScopedIdf(settle_seconds=0)
    cache.learn(cache.generation, SCOPE, idf)
    return cache


def test_a_scope_is_the_set_of_datasets() -> None:
    assert scope_of(["hr", "gov", "hr"]) == scope_of(["gov", "hr"]) == ("gov", "hr")


def test_weights_carry_the_learned_idf_over_the_engines_ln2() -> None:
    cache = learned({3: 1.5, 7: 0.25})
    weighted = cache.weighted(cache.generation, SCOPE, TERMS)
    assert weighted is not None
    assert weighted.indices == TERMS.indices
    # The engine multiplies each weight by ln 2 (IDF over no points): the products are weight x IDF.
    for value, expected in zip(weighted.values, (1.0 * 1.5, 2.0 * 0.25), strict=True):
        assert math.isclose(value * LN2_F32, expected, rel_tol=1e-12)
    assert math.isclose(LN2_F32, math.log(2), rel_tol=1e-7)


def test_one_unknown_term_or_another_scope_means_no_weights() -> None:
    cache = learned({3: 1.5})
    assert cache.weighted(cache.generation, SCOPE, TERMS) is None
    assert cache.missing(SCOPE, TERMS) == [7]
    assert cache.weighted(cache.generation, scope_of(["hr"]), SparseTerms((3,), (1.0,))) is None


def test_a_write_drops_what_was_learned_and_flags_searches_that_overlapped_it() -> None:
    cache = learned({3: 1.5, 7: 0.25})
    before = cache.generation
    with cache.changing():
        during = cache.generation
        assert not cache.unchanged(before)
        assert cache.weighted(during, SCOPE, TERMS) is None  # nothing is handed out mid-write
        assert not cache.may_learn(during)
    assert not cache.unchanged(before)
    assert cache.weighted(cache.generation, SCOPE, TERMS) is None
    assert cache.missing(SCOPE, TERMS) == [3, 7]


def test_what_was_measured_before_a_write_is_not_kept() -> None:
    cache = ScopedIdf(settle_seconds=0)
    measured_at = cache.generation
    with cache.changing():
        pass
    cache.learn(measured_at, SCOPE, {3: 1.5, 7: 0.25})  # a search that learned across the write
    assert cache.missing(SCOPE, TERMS) == [3, 7]


def test_terms_are_learned_only_once_writes_have_settled() -> None:
    assert not ScopedIdf(settle_seconds=math.inf).may_learn(0)
    cache = ScopedIdf(settle_seconds=60)
    with cache.changing():
        pass
    assert not cache.may_learn(cache.generation)
    assert ScopedIdf(settle_seconds=0).may_learn(0)


def test_the_table_starts_again_past_its_limit() -> None:
    cache = ScopedIdf(settle_seconds=0, entry_limit=3)
    cache.learn(cache.generation, SCOPE, {1: 1.0, 2: 1.0})
    cache.learn(cache.generation, SCOPE, {1: 1.0})  # known already: not counted twice
    assert cache.missing(SCOPE, SparseTerms((1, 2), (1.0, 1.0))) == []
    cache.learn(cache.generation, SCOPE, {3: 1.0, 4: 1.0})
    assert cache.missing(SCOPE, SparseTerms((1, 2, 3, 4), (1.0,) * 4)) == [1, 2]
