"""The suite's durations record: outcomes and exit status, each file's time, slowest file first."""

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
        "import time\n\ndef test_waits():\n    time.sleep(0.3)\n\ndef test_fails():\n    assert False\n"
    )
    (folder / "test_quick_one.py").write_text("def test_passes():\n    pass\n")


def test_the_record_names_outcomes_and_puts_the_slowest_file_first(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    _write_tests(folder)
    record = tmp_path / "record.txt"
    _run(folder, record)
    lines = record.read_text(encoding="utf-8").splitlines()
    assert "outcomes\tfailed 1, passed 2" in lines
    assert "exit status\t1" in lines
    files = [line.split("\t") for line in lines if line.endswith(".py")]
    assert [row[2].rsplit("/", 1)[-1] for row in files] == ["test_slow_one.py", "test_quick_one.py"]
    assert float(files[0][0]) >= 0.3 and int(files[0][1]) == 2
