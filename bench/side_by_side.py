"""Two versions of the stack measured at the same time on one machine: CPU per question of each
process at 64 concurrent chats, this working tree against a git revision.

This project's machines are shared and their speed drifts: the pipeline's calibration workload
took 34 ms on one and 42 to 82 ms within one hour on another, and CPU per question follows it.
Figures taken one after the other compare only as well as the machine held still; two stacks
measured at once share whatever the machine does, so their difference is the change's.
Each run starts both stacks at the same time, each measured by its own tree's
``tracing_cost.cpu_ms_per_question`` (the pipeline's target configuration, a warm-up wave, then
``--waves`` waves of 64 questions);
the two loading one 2-core machine is why their figures are higher than a bench run's.

``python -m bench.side_by_side REV [--runs 2] [--waves 8]`` checks REV out into a temporary git
worktree (sharing this tree's virtual environment, with its own generated stubs), prints each
run's figures for both, and removes the worktree.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from bench.tracing_cost import SERVICES
from bench.worktree import PYTHON, ROOT, revision_tree

# The child's part, run in each tree: that tree's stack and measuring code (any revision since
# the tracing section), one JSON line on stdout.
MEASURE = """
import asyncio, json, sys
from bench import tracing_cost
tracing_cost.WAVES = int(sys.argv[1])
print(json.dumps(asyncio.run(tracing_cost.cpu_ms_per_question({}))))
"""


def _start(tree: Path, waves: int) -> subprocess.Popen[str]:
    argv = [str(PYTHON), "-c", MEASURE, str(waves)]
    return subprocess.Popen(argv, cwd=tree, stdout=subprocess.PIPE, text=True)


def _line(label: str, by_process: dict[str, float]) -> str:
    parts = ", ".join(f"{name} {by_process[name]:.2f}" for name in SERVICES)
    return f"{label}: our four {sum(by_process[name] for name in SERVICES):.2f} ms ({parts})"


def compare(revision: str, runs: int, waves: int) -> None:
    with revision_tree(revision) as before:
        for run in range(1, runs + 1):
            children = {revision: _start(before, waves), "this tree": _start(ROOT, waves)}
            for label, child in children.items():
                out, _ = child.communicate()
                if child.returncode != 0:
                    raise SystemExit(f"the stack of {label} failed (exit {child.returncode})")
                print(_line(f"run {run}, {label}", json.loads(out.strip().splitlines()[-1])), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.side_by_side", description=__doc__.split("\n\n")[0])
    parser.add_argument("revision", help="the git revision to compare this working tree with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--waves", type=int, default=8)
    args = parser.parse_args()
    compare(args.revision, args.runs, args.waves)


if __name__ == "__main__":
    main()
