"""The bench's nearest-rank percentile picks a value that was measured, at the rank it says."""

from __future__ import annotations

from bench.table import percentile


def test_p95_of_twenty_samples_is_the_nineteenth() -> None:
    samples = [float(i) for i in range(1, 21)]
    assert percentile(samples, 0.95) == 19.0


def test_p50_of_an_odd_count_is_the_middle_sample_and_p100_the_largest() -> None:
    samples = [5.0, 1.0, 3.0, 4.0, 2.0]
    assert percentile(samples, 0.5) == 3.0
    assert percentile(samples, 1.0) == 5.0


def test_a_fraction_whose_product_is_inexact_in_floating_point_keeps_its_rank() -> None:
    samples = [float(i) for i in range(1, 61)]
    assert percentile(samples, 0.95) == 57.0  # 0.95 × 60 is 57 in exact arithmetic
