"""The charts beside the table (PNG, matplotlib's file-only Agg backend: no display needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

# Chinese series names need a CJK font; DejaVu covers the rest.
plt.rcParams["font.sans-serif"] = ["WenQuanYi Micro Hei", "DejaVu Sans"]
plt.rcParams["axes.unicode_minus"] = False


def _save(figure: Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def recall_by_round(series: Mapping[str, Sequence[float]], path: Path) -> Path:
    """One line per question group: share of gold paragraphs in the evidence after each round.
    A group whose questions all stopped early is extended flat to the last round."""
    rounds = max((len(v) for v in series.values()), default=1)
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    for name, values in series.items():
        padded = [*values, *[values[-1]] * (rounds - len(values))] if values else []
        axes.plot(range(1, rounds + 1), [v * 100 for v in padded], marker="o", label=name)
    axes.set_xticks(range(1, rounds + 1))
    axes.set_xlabel("after retrieval round")
    axes.set_ylabel("gold paragraphs found (%)")
    axes.set_title("Gold recall by round (offline model, sample knowledge base)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return _save(figure, path)


def search_latency(latency: Mapping[str, Mapping[str, Mapping[int, float]]], path: Path) -> Path:
    """p50 by corpus size, one line per backend and mode, log-log; the 10 ms target drawn in."""
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    for backend, modes in latency.items():
        style = "-" if backend == "edge" else "--"
        for mode, by_size in modes.items():
            sizes = sorted(by_size)
            axes.plot(sizes, [by_size[s] * 1000 for s in sizes], style, marker="o", label=f"{backend} {mode}")
    axes.axhline(10, color="grey", linewidth=0.8, linestyle=":", label="target: hybrid 10 ms at 100k")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("paragraphs in the collection")
    axes.set_ylabel("search p50 (ms)")
    axes.set_title("Search latency by corpus size and mode")
    axes.grid(alpha=0.3, which="both")
    axes.legend(fontsize=7)
    return _save(figure, path)


def overhead_by_concurrency(
    ratios: Mapping[str, Mapping[int, float]], targets: Mapping[int, float], path: Path
) -> Path:
    """e2e / theoretical minimum at each concurrency, per configuration, with the targets."""
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    levels = sorted({c for by_level in ratios.values() for c in by_level} | set(targets))
    width = 0.8 / max(1, len(ratios))
    for index, (name, by_level) in enumerate(ratios.items()):
        xs = [levels.index(c) + index * width for c in sorted(by_level)]
        axes.bar(xs, [by_level[c] for c in sorted(by_level)], width=width, label=name)
    for level, target in targets.items():
        x = levels.index(level)
        axes.hlines(target, x - 0.1, x + 0.9, colors="red", linestyles=":", label=f"target at {level}: {target}")
    axes.set_xticks([i + 0.4 - width / 2 for i in range(len(levels))], [f"{c} chat(s)" for c in levels])
    axes.set_ylabel("end-to-end / model latency sum")
    axes.set_ylim(bottom=0.9)
    axes.set_title("Pipeline overhead by concurrency (2 cores)")
    axes.grid(alpha=0.3, axis="y")
    axes.legend(fontsize=7)
    return _save(figure, path)
