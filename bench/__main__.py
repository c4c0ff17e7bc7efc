"""``python -m bench``: run every benchmark section, print one Markdown table of medians and
ratios with the targets beside them, write it with the charts to ``bench/RESULTS.md``.

``python -m bench --only quality search`` runs some sections (for working on one); the file is
written only by a full run, so RESULTS.md always holds figures from one run."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench import (
    attached_questions,
    before,
    charts,
    documents,
    hnsw,
    hostile_files,
    http_limits,
    ingestion,
    loop_latency,
    metrics_cost,
    nul_load,
    pipeline,
    providers,
    quality,
    round_concurrency,
    search_latency,
    tracing_cost,
    upload_burst,
)
from bench.kb_fixture import load_sample_kb
from bench.table import Row, render

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
CHARTS = HERE / "charts"

Section = Callable[[], Awaitable[tuple[list[Row], dict[str, Any]]]]


async def round_rows() -> tuple[list[Row], dict[str, Any]]:
    kb = await load_sample_kb()
    try:
        rows = await round_concurrency.run(kb)
    finally:
        await kb.store.close()
    return [
        Row("round queries", f"{name}: median (ratio to the slower alone {ratio})", value)
        for name, value, ratio in rows
    ], {}


SECTIONS: dict[str, Section] = {
    "pipeline": pipeline.run,
    "before": before.run,
    "search": search_latency.run,
    "hnsw": hnsw.run,
    "ingestion": ingestion.run,
    "documents": documents.run,
    "quality": quality.run,
    "attached_questions": attached_questions.run,
    "loop_latency": loop_latency.run,
    "rounds": round_rows,
    "providers": providers.run,
    "tracing": tracing_cost.run,
    "metrics": metrics_cost.run,
    "hostile": hostile_files.run,
    "nul_load": nul_load.run,
    "http_limits": http_limits.run,
    "upload_burst": upload_burst.run,
}


def machine_line() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def draw(raw: dict[str, dict[str, Any]]) -> list[str]:
    """The charts for the sections that ran, as Markdown image lines."""
    CHARTS.mkdir(exist_ok=True)
    lines = []
    if "quality" in raw:
        charts.recall_by_round(raw["quality"]["recall_by_round"], CHARTS / "recall_by_round.png")
        lines.append("![Gold recall by round](charts/recall_by_round.png)")
    if "search" in raw:
        latency = {
            backend: {mode: {size: cell["p50"] for size, cell in sizes.items()} for mode, sizes in modes.items()}
            for backend, modes in raw["search"]["search"].items()
        }
        charts.search_latency(latency, CHARTS / "search_latency.png")
        lines.append("![Search latency by corpus size and mode](charts/search_latency.png)")
    if "pipeline" in raw:
        ratios = {
            config["label"]: {int(level): ratio for level, ratio in config["e2e_ratio"].items()}
            for config in raw["pipeline"]["configs"].values()
        }
        targets = {1: pipeline.TARGET_1, 64: pipeline.TARGET_64}
        charts.overhead_by_concurrency(ratios, targets, CHARTS / "overhead_by_concurrency.png")
        lines.append("![e2e / minimum by concurrency](charts/overhead_by_concurrency.png)")
    return lines


async def main(only: list[str]) -> str:
    rows: list[Row] = []
    raw: dict[str, dict[str, Any]] = {}
    timings = []
    started = time.perf_counter()
    for name, section in SECTIONS.items():
        if only and name not in only:
            continue
        began = time.perf_counter()
        print(f"== {name} …", file=sys.stderr, flush=True)
        section_rows, raw[name] = await section()
        rows += section_rows
        timings.append(f"{name} {time.perf_counter() - began:.0f} s")
    total = time.perf_counter() - started
    lines = [
        "# Benchmarks",
        "",
        f"Command: `make bench` · machine: {machine_line()} · {total / 60:.1f} min ({', '.join(timings)})",
        "",
        *render(rows),
        "",
        # Charts belong to RESULTS.md, which only a full run writes: a partial run leaves them alone.
        *(draw(raw) if not only else []),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), default=[])
    args = parser.parse_args()
    report = asyncio.run(main(args.only))
    if not args.only:
        RESULTS.write_text(report)
    sys.stdout.write(report)
