"""SQLite units of work (``run_read``/``run_write``): they run on the event loop while no other
connection holds a lock they need, and wait in a thread, never on the loop, when one does."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from collections.abc import Callable

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import SqliteSessions, run_read, run_write
from kbcore.db.tables import ChatLock, utcnow


@pytest.fixture
def sqlite_sessions(sessions: async_sessionmaker[AsyncSession], database_url: str) -> SqliteSessions:
    if not isinstance(sessions, SqliteSessions):
        pytest.skip("SQLite only")
    return sessions


def lock_row(chat_id: str, holder: str) -> ChatLock:
    now = utcnow()
    return ChatLock(chat_id=chat_id, holder=holder, purpose="test", acquired_at=now, expires_at=now)


def holder_of(chat_id: str) -> Callable[[Session], str | None]:
    return lambda session: session.scalar(select(ChatLock.holder).where(ChatLock.chat_id == chat_id))


async def test_a_write_waits_for_another_process_in_a_thread_while_the_loop_runs(
    sqlite_sessions: SqliteSessions, database_url: str
) -> None:
    chat_id = str(uuid.uuid4())
    other = sqlite3.connect(make_url(database_url).database or "", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        write = asyncio.create_task(run_write(sqlite_sessions, lambda s: s.add(lock_row(chat_id, "late"))))
        ticks = 0
        started = time.monotonic()
        while time.monotonic() - started < 0.3:
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks >= 15, "the event loop kept running while the write waited"
        assert not write.done()
        # A reader is not held up by the writer (WAL), and does not see the uncommitted row.
        assert await run_read(sqlite_sessions, holder_of(chat_id)) is None
    finally:
        other.execute("COMMIT")
        other.close()
    await asyncio.wait_for(write, 5)
    assert await run_read(sqlite_sessions, holder_of(chat_id)) == "late"


async def test_a_failed_unit_of_work_writes_nothing_and_frees_the_writers(sqlite_sessions: SqliteSessions) -> None:
    chat_id = str(uuid.uuid4())

    def fails(session: Session) -> None:
        session.add(lock_row(chat_id, "never"))
        session.flush()
        raise RuntimeError("changed its mind")

    with pytest.raises(RuntimeError):
        await run_write(sqlite_sessions, fails)
    assert await run_read(sqlite_sessions, holder_of(chat_id)) is None
    await asyncio.wait_for(run_write(sqlite_sessions, lambda s: s.add(lock_row(chat_id, "next"))), 5)
    assert await run_read(sqlite_sessions, holder_of(chat_id)) == "next"
