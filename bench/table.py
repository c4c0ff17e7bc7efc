"""One row shape for every benchmark section, so ``python -m bench`` prints one table."""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Row:
    """One measured figure. ``target`` is the issue's target in words (``"≤ 1.05"``) or ``""``;
    ``met`` is None when the row has no target."""

    section: str
    measure: str
    value: str
    target: str = ""
    met: bool | None = None


def verdict(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "**missed**")


def render(rows: Sequence[Row]) -> list[str]:
    lines = ["| section | measure | value | target | |", "|---|---|---|---|---|"]
    lines += [f"| {r.section} | {r.measure} | {r.value} | {r.target} | {verdict(r.met)} |" for r in rows]
    return lines


def run_alone(run: Callable[[], Coroutine[Any, Any, tuple[list[Row], Any]]]) -> None:
    """``python -m bench.<section>``: one section's table, and how long it took to measure."""
    started = time.perf_counter()
    found, _ = asyncio.run(run())
    sys.stdout.write("\n".join(render(found)) + "\n")
    sys.stdout.write(f"\n({time.perf_counter() - started:.0f} s)\n")


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile: p95 of 20 samples is the 19th, a value that was measured."""
    ordered = sorted(samples)
    index = max(0, min(len(ordered) - 1, math.ceil(round(fraction * len(ordered), 9)) - 1))
    return ordered[index]


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms" if seconds < 0.01 else f"{seconds * 1000:.1f} ms"
