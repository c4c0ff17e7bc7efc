"""The SQLite database's files: private to the service's user, and set up to give space back.

A new database file is created here, before SQLite opens it: mode 0600 (SQLite gives its WAL
and shared-memory files the database's own mode) and ``auto_vacuum = INCREMENTAL``, which only
an empty database takes. An existing one has its files tightened to 0600 whenever an engine
opens it, and is converted to incremental vacuum once, by the migration (``VACUUM`` rewrites the
whole file, so it runs where a deploy expects to wait: ``python -m kbcore.db.migrate``).
``sqlite_space`` then hands freed pages back to the disk while the services run.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlalchemy.engine import make_url

from kbcore.process.private_paths import FOLDER_MODE, private_file, tighten_if_present

INCREMENTAL = 2  # ``PRAGMA auto_vacuum``'s value for INCREMENTAL
# The files SQLite keeps beside a database in WAL mode.
COMPANIONS = ("-wal", "-shm")


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL; None for another database or an in-memory one."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def prepare_sqlite_files(url: str) -> None:
    """The database's folder (created private when missing) and its files, private; a new
    database starts with incremental vacuum and WAL. Nothing for PostgreSQL."""
    path = sqlite_path(url)
    if path is None:
        return
    path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    if private_file(path):
        _start_incremental(path)
    for suffix in COMPANIONS:
        tighten_if_present(path.with_name(path.name + suffix))


def _start_incremental(path: Path) -> None:
    """A new, empty database: incremental vacuum first (an empty file still takes it), then WAL,
    which writes the header that keeps both."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
        connection.execute("PRAGMA journal_mode=WAL")
    finally:
        connection.close()


def convert_to_incremental(url: str) -> bool:
    """Turn an existing database's auto_vacuum to INCREMENTAL (a ``VACUUM``: it rewrites the file
    and needs as much free disk again while it runs); True when it had to. Run by the migration,
    with the services stopped or idle: it holds the write lock for the whole rewrite."""
    path = sqlite_path(url)
    if path is None:
        return False
    connection = sqlite3.connect(path, isolation_level=None, timeout=60)
    try:
        if connection.execute("PRAGMA auto_vacuum").fetchone()[0] == INCREMENTAL:
            return False
        connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
        connection.execute("VACUUM")
        return True
    finally:
        connection.close()
