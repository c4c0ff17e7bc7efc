"""Async engines for SQLite (embedded default) and PostgreSQL from one URL setting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

SQLITE_BUSY_TIMEOUT_MS = 15000


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


def ensure_sqlite_folder(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)


def configure_sqlite(engine: Any) -> None:
    """WAL, a busy timeout, foreign keys, and BEGIN IMMEDIATE.

    Several processes write one SQLite file. A deferred transaction that reads and then
    writes fails at once with SQLITE_BUSY when another process committed in between;
    taking the write lock at BEGIN makes writers queue on the busy timeout instead.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # let the "begin" hook below issue BEGIN
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    ensure_sqlite_folder(url)
    target = async_url(url)
    if make_url(target).get_backend_name() == "sqlite":
        engine = create_async_engine(target, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})
        configure_sqlite(engine.sync_engine)
        return engine
    return create_async_engine(target, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
