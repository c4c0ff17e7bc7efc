"""Dealing the own_database test files between `make test`'s two passes by the durations records."""

from __future__ import annotations

from pathlib import Path

from tests.suite_split import POSTGRESQL, SQLITE, deal


def _record(path: Path, wall: float, files: dict[str, float]) -> None:
    rows = [f"{seconds:8.1f}\t{seconds / 2:8.1f}\t   3\t{file}" for file, seconds in files.items()]
    path.write_text(
        "# a record\n" + f"wall seconds\t{wall:.0f}\noutcomes\tpassed 9\nexit status\t0\n\n" + "\n".join(rows) + "\n"
    )


def test_the_slow_files_go_to_the_pass_that_would_end_first_and_every_file_to_one_pass(tmp_path: Path) -> None:
    # SQLite: 500 s, of which 150 s are own files; PostgreSQL: 400 s of shared tests only.
    own = {"tests/e2e/test_a.py": 80.0, "tests/e2e/test_b.py": 50.0, "tests/unit/test_c.py": 20.0}
    _record(tmp_path / "sqlite.txt", 500, {**own, "tests/services/test_shared.py": 300.0})
    _record(tmp_path / "postgresql.txt", 400, {"tests/services/test_shared.py": 320.0})
    dealt = deal([*own, "tests/e2e/test_new.py"], tmp_path)
    assert set(dealt) == {*own, "tests/e2e/test_new.py"}
    # Without own files SQLite takes 350 s and PostgreSQL 400 s: the 80 s file to SQLite (430),
    # the 50 s one to PostgreSQL (450), the 20 s one to SQLite (450); the new one, at 450 against
    # 450, to the pass whose name sorts first.
    assert dealt["tests/e2e/test_a.py"] == SQLITE
    assert dealt["tests/e2e/test_b.py"] == POSTGRESQL
    assert dealt["tests/unit/test_c.py"] == SQLITE
    assert dealt["tests/e2e/test_new.py"] == POSTGRESQL


def test_files_dealt_to_postgresql_last_time_are_weighed_by_that_record(tmp_path: Path) -> None:
    _record(tmp_path / "sqlite.txt", 300, {"tests/services/test_shared.py": 290.0})
    _record(tmp_path / "postgresql.txt", 500, {"tests/e2e/test_fuzz.py": 200.0, "tests/services/test_shared.py": 290.0})
    dealt = deal(["tests/e2e/test_fuzz.py", "tests/unit/test_quick.py"], tmp_path)
    # Without it PostgreSQL takes 300 s, as SQLite does: the 200 s file goes to the pass whose
    # name sorts first, and the quick one, unknown to both records, to the one that now ends sooner.
    assert dealt == {"tests/e2e/test_fuzz.py": POSTGRESQL, "tests/unit/test_quick.py": SQLITE}


def test_without_records_every_file_still_goes_to_one_pass(tmp_path: Path) -> None:
    dealt = deal(["tests/unit/test_x.py", "tests/unit/test_y.py"], tmp_path / "nowhere")
    assert sorted(dealt) == ["tests/unit/test_x.py", "tests/unit/test_y.py"]
    assert set(dealt.values()) <= {SQLITE, POSTGRESQL}
