"""Fixed-window counters in the database, shared by every chat-service process.

A limit that must hold across processes and replicas (sign-ins per share link, a link's
questions per day) cannot live in one process's memory, and the deployment has no Redis; the
database every process already shares can count. A hit is one upsert: insert the window's row
with one hit, or add one to it ``WHERE hits < limit``. PostgreSQL re-checks the condition on
the row it waited for and SQLite runs one writer at a time, so concurrent hits never pass the
limit, and a hit never depends on another request having created the row first.

Windows are named by their start (``2026-11-30T07:31``, ``2026-11-30``), so names of one kind
sort by time: a request that turned a new window prunes only the key's *earlier* windows. A
request that computed its window just before the boundary and counts just after still finds
(or makes) its row; before this, the first request of a new minute deleted every other window
of the key, and those still counting in the old one were refused as over the limit.
"""

from __future__ import annotations

import datetime as dt
import functools

from sqlalchemy import Table, bindparam, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.sql.expression import Executable

from kbcore.db.tables import RateWindow

_WINDOWS: Table = RateWindow.__table__  # type: ignore[assignment]


def minute_window(now: dt.datetime | None = None) -> str:
    """The current UTC minute, as a window name (``2026-11-30T07:31``)."""
    return (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M")


def day_window(now: dt.datetime | None = None) -> str:
    """The current UTC day, as a window name (``2026-11-30``)."""
    return (now or dt.datetime.now(dt.UTC)).date().isoformat()


async def prune_earlier_windows(sessions: async_sessionmaker[AsyncSession], key: str, window: str) -> None:
    """Drop ``key``'s rows of windows before ``window``, unless ``window`` has its row already
    (the common case: one read). Outside the transaction that counts, so the counting
    transaction holds no lock on rows it does not count in."""
    async with sessions() as session:
        if await session.get(RateWindow, (key, window)) is not None:
            return
    async with sessions.begin() as session:
        await session.execute(delete(RateWindow).where(RateWindow.key == key, RateWindow.window < window))


@functools.cache
def _hit(dialect_name: str) -> Executable:
    """Insert the window's row with one hit, or add one while under the limit (an upsert in the
    dialect's own words, built once); RETURNING, not rowcount: psycopg reports no rowcount for
    an upsert."""
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    statement = dialect.insert(_WINDOWS).on_conflict_do_update(
        index_elements=[_WINDOWS.c.key, _WINDOWS.c.window],
        set_={"hits": _WINDOWS.c.hits + 1},
        where=_WINDOWS.c.hits < bindparam("b_limit"),
    )
    returning: Executable = statement.returning(_WINDOWS.c.key)
    return returning


async def take(session: AsyncSession, key: str, window: str, limit: int) -> bool:
    """Count one hit of ``key`` in ``window`` if it is under ``limit``; False when it is not.
    Runs in the caller's transaction, so the hit commits with what it allowed, or not at all."""
    if limit < 1:
        return False
    statement = _hit(session.get_bind().dialect.name)
    counted = await session.execute(statement, {"key": key, "window": window, "hits": 1, "b_limit": limit})
    return counted.first() is not None
