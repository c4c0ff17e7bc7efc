"""The suite's durations record: outcomes and exit status, each file's time and CPU time,
slowest file first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(folder: Path, record: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KB_DURATIONS_RECORD"}
    env["KB_DURATIONS_RECORD"] = str(record)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.durations_record", "-p", "no:cacheprovider", str(folder)],
        cwd=REPO,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )


def _write_tests(folder: Path) -> None:
    folder.mkdir()
    (folder / "test_slow_one.py").write_text(
        "import time\n\ndef test_waits():\n    time.sleep(0.6)\n\ndef test_fails():\n    assert False\n"
    )
    (folder / "test_quick_one.py").write_text("def test_passes():\n    pass\n")
    # Busy in a child process for a quarter of a second: its CPU counts once the test waited for it.
    (folder / "test_busy_child.py").write_text(
        "import subprocess, sys\n\n"
        "def test_counts():\n"
        "    code = 'import time\\nend = time.process_time() + 0.25\\nwhile time.process_time() < end: pass'\n"
        "    subprocess.run([sys.executable, '-c', code], check=True)\n"
    )


def test_the_record_names_outcomes_and_puts_the_slowest_file_first(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    _write_tests(folder)
    record = tmp_path / "record.txt"
    _run(folder, record)
    lines = record.read_text(encoding="utf-8").splitlines()
    assert "outcomes\tfailed 1, passed 3" in lines
    assert "exit status\t1" in lines
    rows = {row[3].rsplit("/", 1)[-1]: row for row in (line.split("\t") for line in lines if line.endswith(".py"))}
    assert next(iter(rows)) == "test_slow_one.py" and list(rows)[-1] == "test_quick_one.py"
    slow, busy = rows["test_slow_one.py"], rows["test_busy_child.py"]
    assert float(slow[0]) >= 0.6 and int(slow[2]) == 2
    assert float(slow[1]) < 0.2, "a sleep costs no CPU"
    assert float(busy[1]) >= 0.2, "the child's CPU is the test's"
