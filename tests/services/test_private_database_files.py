"""The SQLite database, its WAL and its shared-memory file are readable by the service's user only
(0600), and so is the folder a new database is made in (0700), like the secrets beside them; a
database made before this rule is tightened when an engine opens it. (The data folder itself is
tightened by every service at its start: tests/e2e/test_stack_processes.py.)"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from kbcore.db.engine import create_engine, run_write, session_factory
from kbcore.process.private_paths import private_folder

pytestmark = [pytest.mark.own_database]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files_of(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


async def test_a_new_database_and_its_wal_are_private_in_a_private_folder(tmp_path: Path) -> None:
    path = tmp_path / "data" / "kb.sqlite3"
    old_umask = os.umask(0o022)  # the usual umask: files 0644 unless made otherwise
    try:
        engine = create_engine(f"sqlite:///{path}")
        await run_write(session_factory(engine), lambda s: s.execute(text("CREATE TABLE t (x INTEGER)")))
        assert mode(path.parent) == 0o700
        assert {p.name: mode(p) for p in files_of(path)} == {p.name: 0o600 for p in files_of(path)}
        await engine.dispose()
    finally:
        os.umask(old_umask)


async def test_a_database_made_before_is_made_private_when_it_is_opened(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite3"
    old_umask = os.umask(0o022)
    try:
        with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as earlier:  # still open: its WAL stays
            earlier.execute("PRAGMA journal_mode=WAL")
            earlier.execute("CREATE TABLE t (x INTEGER)")
            earlier.execute("INSERT INTO t VALUES (1)")
            assert {mode(p) for p in files_of(path)} == {0o644}
            engine = create_engine(f"sqlite:///{path}")
            assert {p.name: mode(p) for p in files_of(path)} == {p.name: 0o600 for p in files_of(path)}
            await engine.dispose()
    finally:
        os.umask(old_umask)


def test_an_open_data_folder_is_closed_to_others(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    private_folder(folder)
    assert mode(folder) == 0o700
    private_folder(tmp_path / "fresh" / "data")
    assert mode(tmp_path / "fresh" / "data") == 0o700
