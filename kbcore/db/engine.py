"""Async engines for SQLite (embedded default) and PostgreSQL from one URL setting."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import create_engine as create_sync_engine
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session, sessionmaker

from kbcore.db.sqlite_files import prepare_sqlite_files, sqlite_path

T = TypeVar("T")
# A unit of work in plain synchronous SQLAlchemy: what ``run_read``/``run_write`` run.
Work = Callable[[Session], T]

SQLITE_BUSY_TIMEOUT_MS = 15000
# The WAL is cut back to this after a checkpoint: a big write (a 50 MiB upload) would otherwise
# leave a WAL file of its size behind for good.
SQLITE_WAL_KEEP_BYTES = 8 << 20
# Set on the connection of a ``sessions.begin()`` block: that transaction writes.
WRITE_OPTION = "kb_write"


def sync_url(url: str) -> str:
    """The driver-qualified URL for synchronous use (Alembic): psycopg 3 for PostgreSQL."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "postgresql":
        return parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    if parsed.get_backend_name() == "sqlite":
        return parsed.set(drivername="sqlite").render_as_string(hide_password=False)
    raise ValueError(f"unsupported database URL {parsed.drivername!r}: use sqlite:/// or postgresql://")


def async_url(url: str) -> str:
    parsed = make_url(sync_url(url))
    if parsed.get_backend_name() == "sqlite":
        return parsed.set(drivername="sqlite+aiosqlite").render_as_string(hide_password=False)
    return parsed.render_as_string(hide_password=False)  # psycopg 3 serves sync and async


def configure_sqlite(engine: Any, busy_timeout_ms: int = SQLITE_BUSY_TIMEOUT_MS) -> None:
    """WAL (cut back to ``SQLITE_WAL_KEEP_BYTES`` after checkpoints), a busy timeout, foreign
    keys, and BEGIN IMMEDIATE for writers.

    Several processes write one SQLite file. A deferred transaction that reads and then
    writes fails at once with SQLITE_BUSY when another process committed in between;
    taking the write lock at BEGIN makes writers queue on the busy timeout instead.
    Readers (sessions outside ``sessions.begin()``) begin DEFERRED: in WAL mode they
    never wait for the write lock, nor hold it from a writer.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let the "begin" hook below issue BEGIN
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA journal_size_limit={SQLITE_WAL_KEEP_BYTES}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        writes = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    prepare_sqlite_files(url)
    target = async_url(url)
    if make_url(target).get_backend_name() == "sqlite":
        engine = create_async_engine(target, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        configure_sqlite(engine.sync_engine)
        return engine
    return create_async_engine(target, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


class _WriteTransaction:
    """``async with sessions.begin()`` on SQLite: the process's write lock, then BEGIN IMMEDIATE.

    SQLite has one writer at a time. Without the lock, concurrent writers of one process
    each take a pool connection and all but one wait in SQLite's busy handler, which sleeps
    1, 2, 5, 10, … ms between attempts: under load a write waited far longer than the writes
    ahead of it took. Queued on an asyncio lock they run back to back instead; only writers
    of other processes still meet the busy handler.
    """

    __slots__ = ("_inner", "_lock", "_maker")

    def __init__(self, maker: SqliteSessions) -> None:
        self._maker = maker
        self._lock = maker.write_lock

    async def __aenter__(self) -> AsyncSession:
        await self._lock.acquire()
        try:
            self._inner = self._maker.write_sessions.begin()
            return await self._inner.__aenter__()
        except BaseException:
            self._lock.release()
            raise

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self._inner.__aexit__(exc_type, exc, tb)
        finally:
            self._lock.release()


class SqliteSessions(async_sessionmaker[AsyncSession]):
    """Sessions on SQLite: ``begin()`` blocks are the writers (see ``_WriteTransaction``).

    ``run_read``/``run_write`` run a unit of work in plain synchronous SQLAlchemy on the same
    file, whole. Through aiosqlite every cursor step is a hop to the connection's thread and
    back through the event loop (about five per statement: the transaction that starts a
    question made some 40), and those hops cost more than the SQL. A unit of work first runs
    on the event loop, on a connection that never waits for a lock (SQLite statements on a
    local file take microseconds); only when another process holds the write lock (or a
    checkpoint blocks a reader) does it run again in a worker thread that waits the busy
    timeout, so the event loop itself never waits. A thread is not the default: under load
    it waits for the GIL after every SQLite call, and the write lock with it.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        super().__init__(engine, expire_on_commit=False)
        # The writers' sessions: their transactions begin IMMEDIATE (the "begin" hook reads the option).
        self.write_sessions = async_sessionmaker(engine, expire_on_commit=False, execution_options={WRITE_OPTION: True})
        self._write_lock: asyncio.Lock | None = None
        url = engine.url.set(drivername="sqlite")
        self.database_path = sqlite_path(url.render_as_string(hide_password=False))
        now = create_sync_engine(url, connect_args={"timeout": 0, "check_same_thread": False})
        configure_sqlite(now, busy_timeout_ms=0)
        waiting = create_sync_engine(
            url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
        )
        configure_sqlite(waiting)
        for sync in (now, waiting):
            event.listen(engine.sync_engine, "engine_disposed", lambda _, sync=sync: sync.dispose())
        self._at_once = sessionmaker(now, expire_on_commit=False)
        self._waiting = sessionmaker(waiting, expire_on_commit=False)

    @property
    def write_lock(self) -> asyncio.Lock:
        if self._write_lock is None:
            self._write_lock = asyncio.Lock()
        return self._write_lock

    def begin(self) -> Any:
        return _WriteTransaction(self)

    @staticmethod
    def _read(sessions: sessionmaker[Session], work: Work[T]) -> T:
        with sessions() as session:
            return work(session)

    @staticmethod
    def _write(sessions: sessionmaker[Session], work: Work[T]) -> T:
        with sessions(execution_options={WRITE_OPTION: True}) as session, session.begin():
            return work(session)

    async def run_read(self, work: Work[T]) -> T:
        try:
            return self._read(self._at_once, work)
        except OperationalError as exc:
            if not _busy(exc):
                raise
        return await asyncio.to_thread(self._read, self._waiting, work)

    async def run_write(self, work: Work[T]) -> T:
        async with self.write_lock:  # writers of this process: one after the other, never busy
            try:
                return self._write(self._at_once, work)
            except OperationalError as exc:
                if not _busy(exc):
                    raise
            # The lock stays held until the thread's transaction has ended, even when the
            # caller is cancelled meanwhile (a thread cannot be; its commit still happens).
            done = asyncio.ensure_future(asyncio.to_thread(self._write, self._waiting, work))
            try:
                return await asyncio.shield(done)
            except asyncio.CancelledError:
                await asyncio.wait([done])
                raise


def _busy(error: OperationalError) -> bool:
    """SQLITE_BUSY: another connection holds a lock this one would have to wait for."""
    code = getattr(error.orig, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


async def run_read(sessions: async_sessionmaker[AsyncSession], work: Work[T]) -> T:
    """Run ``work`` in a reading session: one worker-thread hop on SQLite, ``run_sync`` elsewhere."""
    if isinstance(sessions, SqliteSessions):
        return await sessions.run_read(work)
    async with sessions() as session:
        return await session.run_sync(work)


async def run_write(sessions: async_sessionmaker[AsyncSession], work: Work[T]) -> T:
    """Run ``work`` in one write transaction, committed when it returns, rolled back when it raises."""
    if isinstance(sessions, SqliteSessions):
        return await sessions.run_write(work)
    async with sessions.begin() as session:
        return await session.run_sync(work)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    if engine.dialect.name == "sqlite":
        return SqliteSessions(engine)
    return async_sessionmaker(engine, expire_on_commit=False)
