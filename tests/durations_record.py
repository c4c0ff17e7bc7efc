"""A record of where the suite's time goes, kept in the repository and refreshed by `make test`.

pytest's ``--durations`` prints the slowest tests of one run and forgets them; a suite that
grows every week needs a record a reviewer can diff: which files got slower, how long the whole
run took, how many tests passed. When ``KB_DURATIONS_RECORD`` names a file (``make test`` sets
it, one file per database: ``tests/durations/``), the run writes there its wall time, its
outcome counts and every test file's time (setup, call and teardown of its tests), slowest first,
with the CPU seconds the file's tests spent in the test process and in the child processes it
waited for during them (a stack's processes, a parser child). Two passes share the machine's
cores, so a file's wall time also holds the time it waited for a core; its CPU time is what it
costs, the figure to compare between records. (The browser, started once per run and ended at
its end, has its CPU counted in no file; a child nobody waited for is counted in the file whose
test makes the next subprocess, since that is when Python reaps it.)
A run of a few files (no ``KB_DURATIONS_RECORD``) writes nothing, so it cannot overwrite the
record with a partial one.
"""

from __future__ import annotations

import os
import resource
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

RECORD_VARIABLE = "KB_DURATIONS_RECORD"


class DurationsRecord:
    """Adds up each test file's time and the outcomes, and writes them when the session ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.started = time.monotonic()
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.tests: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        before = _cpu_seconds()
        try:
            yield
        finally:
            self.cpu[item.nodeid.split("::", 1)[0]] += _cpu_seconds() - before

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        file = report.nodeid.split("::", 1)[0]
        self.seconds[file] += report.duration
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.tests[file] += 1
            self.outcomes[report.outcome] += 1
        elif report.when == "teardown" and report.outcome == "failed":
            self.outcomes["error"] += 1

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        wall = time.monotonic() - self.started
        lines = [
            "# Written by `make test` (tests/durations_record.py): wall time, outcomes, then each test",
            "# file's time (setup, call and teardown of its tests), CPU seconds (its process and the children",
            "# it waited for) and number of tests, slowest first.",
            f"wall seconds\t{wall:.0f}",
            "outcomes\t" + ", ".join(f"{name} {count}" for name, count in sorted(self.outcomes.items())),
            f"exit status\t{exitstatus}",
            "",
        ]
        for file, seconds in sorted(self.seconds.items(), key=lambda item: (-item[1], item[0])):
            lines.append(f"{seconds:8.1f}\t{self.cpu[file]:8.1f}\t{self.tests[file]:4d}\t{file}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cpu_seconds() -> float:
    """User and system CPU of this process and of the children it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_configure(config: pytest.Config) -> None:
    target = os.environ.get(RECORD_VARIABLE, "")
    if target:
        config.pluginmanager.register(DurationsRecord(Path(target)), "durations-record")
