"""The CPU target's before figure, measured in the same run on the same machine.

The issue quotes 49 ms of CPU per question for our four processes, read by revision 009ba69's
own bench run on the machine of that day. This project's machines differ several times over in
speed (the pipeline's calibration workload took 25 to 100 ms on them), so that figure compares
with no other run's. This section checks 009ba69 out (``bench.worktree``), runs that revision's
own pipeline measurement of the target configuration, then this tree's, one after the other:
the two figures and their ratio are what the code changed, on whatever machine the bench runs.
Should the old revision not be at hand (no git, a shallow clone) or no longer run (a library it
needs gone from the environment), the row says so instead of a figure.

``python -m bench.before`` runs this section alone and prints its rows.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any

from bench import pipeline
from bench.table import Row, run_alone
from bench.worktree import PYTHON, ROOT, revision_tree

SECTION = "before"
BEFORE = "009ba69"  # the revision whose bench run the 49 ms comes from
BEFORE_IN_ITS_OWN_RUN_MS = 49

# Run in each tree: that tree's pipeline section, its first (target) configuration only; the
# raw figures as one JSON line on stdout. Every revision since the pipeline section has these.
MEASURE = """
import asyncio, json
from bench import pipeline
config = pipeline.CONFIGS[0]
_, raw = asyncio.run(pipeline.run(only=[config.key]))
found = raw["configs"][config.key]
print(json.dumps({"cpu_seconds": found["cpu_seconds_concurrent"], "questions": len(found["concurrent"])}))
"""


def _measure(tree: Path) -> dict[str, float]:
    """CPU ms per question of each of our four processes in the tree's 64-chat run."""
    done = subprocess.run([str(PYTHON), "-c", MEASURE], cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"its pipeline measurement failed: {_last_line(done.stderr)}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {name: found["cpu_seconds"][name] * 1000 / found["questions"] for name in pipeline.OUR_PROCESSES}


def _last_line(text: str | None) -> str:
    return ((text or "").strip().splitlines() or ["no message"])[-1]


def _figure(by_process: dict[str, float]) -> str:
    parts = ", ".join(f"{name} {ms:.1f}" for name, ms in by_process.items())
    return f"{sum(by_process.values()):.1f} ms ({parts})"


def _rows(before: dict[str, float], now: dict[str, float]) -> list[Row]:
    chats = pipeline.CONCURRENT_CHATS
    return [
        Row(
            SECTION,
            f"CPU per question at {chats} chats, our four processes, revision {BEFORE} (before the throughput work: "
            f"{BEFORE_IN_ITS_OWN_RUN_MS} ms in its own run), measured in this run",
            _figure(before),
        ),
        Row(SECTION, "the same measurement of this tree, right after", _figure(now)),
        Row(
            SECTION,
            f"CPU per question, this tree / {BEFORE}, same machine",
            f"{sum(now.values()) / sum(before.values()):.2f}×",
        ),
    ]


async def run() -> tuple[list[Row], dict[str, Any]]:
    try:
        with revision_tree(BEFORE) as tree:
            before = await asyncio.to_thread(_measure, tree)
        now = await asyncio.to_thread(_measure, ROOT)
    except (subprocess.CalledProcessError, RuntimeError, OSError) as error:  # OSError: no git
        reason = _last_line(error.stderr) if isinstance(error, subprocess.CalledProcessError) else str(error)
        return [Row(SECTION, f"CPU per question, revision {BEFORE} against this tree", f"not measured: {reason}")], {}
    return _rows(before, now), {"before_ms": before, "now_ms": now}


if __name__ == "__main__":
    run_alone(run)
