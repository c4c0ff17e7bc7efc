"""Which of `make test`'s two passes runs each test file marked ``own_database``.

The PostgreSQL pass runs every test that opens the suite's database; the tests marked
``own_database`` open none of it (their database, if any, is a SQLite file of their own), so
they need running once, in either pass. They used to run in the SQLite pass only, which then
ran minutes after the PostgreSQL pass had ended while one of the machine's two cores waited.
Now they are dealt to whichever pass the durations records (``tests/durations/``) predict will
end sooner: the files slowest first, each to the pass whose predicted time is lower. Both passes
read the same copy of the records, taken by ``scripts/run_suite.sh`` before either starts, so
they deal the files alike and every file runs in exactly one of them. A file the records do
not know yet counts as taking no time.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SQLITE, POSTGRESQL = "sqlite", "postgresql"


def record_seconds(record: Path) -> tuple[float, dict[str, float]]:
    """A durations record's wall seconds and each file's seconds (nothing, if there is none)."""
    if not record.is_file():
        return 0.0, {}
    wall, files = 0.0, {}
    for line in record.read_text(encoding="utf-8").splitlines():
        cells = line.split("\t")
        if cells[0] == "wall seconds":
            wall = float(cells[1])
        elif cells[-1].endswith(".py"):
            files[cells[-1]] = float(cells[0])
    return wall, files


def deal(own_files: Iterable[str], records: Path) -> dict[str, str]:
    """Each of ``own_files`` (paths as the records write them) with the pass that runs it."""
    own = sorted(set(own_files))
    predicted: dict[str, float] = {}
    seconds: dict[str, float] = {}
    for database in (SQLITE, POSTGRESQL):
        wall, files = record_seconds(records / f"{database}.txt")
        # What the pass takes without any own_database file, then each file's time as last run.
        predicted[database] = wall - sum(files.get(file, 0.0) for file in own)
        for file in own:
            seconds[file] = max(seconds.get(file, 0.0), files.get(file, 0.0))
    dealt: dict[str, str] = {}
    for file in sorted(own, key=lambda name: (-seconds[name], name)):
        lighter = min((SQLITE, POSTGRESQL), key=lambda database: (predicted[database], database))
        dealt[file] = lighter
        predicted[lighter] += seconds[file]
    return dealt
