"""A dense vector is refused before it reaches an engine when it has the wrong size or holds a
NaN or an infinity; a finite one is taken whole, even when its values are too large to add up."""

from __future__ import annotations

import math

import pytest

from services.retrieval.store.layout import dense_vector


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, -math.inf],
)
@pytest.mark.parametrize("where", [0, 2, 3])
def test_a_nan_or_an_infinity_anywhere_is_refused(bad: float, where: int) -> None:
    values = [0.1, -0.2, 0.3, 0.4]
    values[where] = bad
    with pytest.raises(ValueError, match="NaN or infinity"):
        dense_vector(values, 4)


def test_infinities_that_cancel_out_are_still_refused() -> None:
    with pytest.raises(ValueError, match="NaN or infinity"):
        dense_vector([math.inf, -math.inf, 0.0], 3)


def test_finite_values_whose_sum_overflows_are_taken() -> None:
    assert dense_vector([1e308, 1e308, -1.0], 3) == [1e308, 1e308, -1.0]


def test_the_wrong_size_is_refused_and_integers_become_floats() -> None:
    with pytest.raises(ValueError, match="3 dimensions"):
        dense_vector([0.1, 0.2, 0.3], 4)
    assert dense_vector([1, 0, 0], 3) == [1.0, 0.0, 0.0]
    assert all(type(v) is float for v in dense_vector([1, 0, 0], 3))
