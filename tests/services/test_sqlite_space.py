"""The SQLite database gives the space of deleted data back to the disk: a new database starts with
incremental vacuum, an existing one is converted once by the migration, and the pages a cancelled
upload's original leaves are handed back in short steps that a question's write never waits long
behind. On a SQLite file of the test's own (PostgreSQL's autovacuum needs nothing of ours)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from kbcore.db.engine import SqliteSessions, create_engine, run_write, session_factory
from kbcore.db.migrate import upgrade
from kbcore.db.sqlite_files import INCREMENTAL, convert_to_incremental
from kbcore.db.sqlite_space import free_pages, give_back_space
from kbcore.db.tables import ChatLock, utcnow
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.ingestion.jobs.queue import JobQueue, Upload

pytestmark = [pytest.mark.own_database]
MiB = 1 << 20


def auto_vacuum(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return int(connection.execute("PRAGMA auto_vacuum").fetchone()[0])


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[tuple[Path, SqliteSessions]]:
    path = tmp_path / "data" / "kb.sqlite3"
    url = f"sqlite:///{path}"
    upgrade(url)
    engine = create_engine(url)
    sessions = session_factory(engine)
    assert isinstance(sessions, SqliteSessions)
    yield path, sessions
    await engine.dispose()


async def test_a_new_database_starts_with_incremental_vacuum(tmp_path: Path) -> None:
    path = tmp_path / "new" / "kb.sqlite3"
    engine = create_engine(f"sqlite:///{path}")  # the file is made before SQLite opens it
    assert auto_vacuum(path) == INCREMENTAL
    await engine.dispose()
    upgrade(f"sqlite:///{path}")
    assert auto_vacuum(path) == INCREMENTAL
    assert convert_to_incremental(f"sqlite:///{path}") is False, "nothing to convert: it was born so"


def test_an_existing_database_is_converted_once_by_the_migration_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "kb.sqlite3"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as old:  # as an earlier release left it
        old.execute("PRAGMA journal_mode=WAL")
        old.execute("CREATE TABLE kept (x TEXT)")
        old.execute("INSERT INTO kept VALUES ('还在')")
    assert auto_vacuum(path) == 0
    upgrade(f"sqlite:///{path}")
    assert auto_vacuum(path) == INCREMENTAL
    assert convert_to_incremental(f"sqlite:///{path}") is False, "once: a second migration rewrites nothing"
    with contextlib.closing(sqlite3.connect(path)) as connection:
        assert connection.execute("SELECT x FROM kept").fetchall() == [("还在",)]


async def test_a_cancelled_uploads_original_is_given_back_to_the_disk_while_writes_go_on(
    database: tuple[Path, SqliteSessions],
) -> None:
    path, sessions = database
    dataset = await Catalog(sessions).create_dataset("空间", "")
    queue = JobQueue(sessions, 30.0, "edge:space-test")
    document = await queue.submit(dataset.id, Upload("大文件", "大文件.txt", "txt", os.urandom(20 * MiB)))
    grown = path.stat().st_size
    await queue.cancel(dataset.id, document.id)  # queued: ended at once, its original deleted
    assert free_pages(path) * 4096 >= 19 * MiB

    waits: list[float] = []

    async def question_writes() -> None:
        """What the chat service does meanwhile: short writes, each timed."""
        for i in range(200):
            started = time.monotonic()
            now = utcnow()
            lock = ChatLock(chat_id=f"chat-{i}", holder="q", purpose="test", acquired_at=now, expires_at=now)
            await run_write(sessions, partial(Session.add, instance=lock))
            waits.append(time.monotonic() - started)
            await asyncio.sleep(0.002)

    freed, _ = await asyncio.gather(give_back_space(sessions), question_writes())
    assert freed * 4096 >= 19 * MiB and free_pages(path) == 0
    assert path.stat().st_size <= grown - 18 * MiB, (grown, path.stat().st_size)
    assert max(waits) < 1.0, f"a write waited {max(waits):.3f} s behind the give-back"
    assert path.with_name("kb.sqlite3-wal").stat().st_size <= 9 * MiB, "the WAL was cut back too"
