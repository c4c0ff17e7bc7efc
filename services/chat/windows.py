"""Fixed-window counters in the database, shared by every chat-service process.

A limit that must hold across processes and replicas (sign-ins per share link, a link's
questions per day) cannot live in one process's memory, and the deployment has no Redis; the
database every process already shares can count. A hit is one conditional ``UPDATE … SET
hits = hits + 1 WHERE hits < limit``: PostgreSQL re-checks the condition after waiting on the
row lock and SQLite runs one writer at a time, so concurrent hits never pass the limit.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.models import RateWindow


def minute_window(now: dt.datetime | None = None) -> str:
    """The current UTC minute, as a window name (``2026-11-30T07:31``)."""
    return (now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M")


def day_window(now: dt.datetime | None = None) -> str:
    """The current UTC day, as a window name (``2026-11-30``)."""
    return (now or dt.datetime.now(dt.UTC)).date().isoformat()


async def open_window(sessions: async_sessionmaker[AsyncSession], key: str, window: str) -> None:
    """Make sure ``key`` has a row for ``window`` (outside the transaction that counts, so a
    lost insert race costs nothing), dropping the key's rows of earlier windows."""
    async with sessions() as session:
        if await session.get(RateWindow, (key, window)) is not None:
            return
    try:
        async with sessions.begin() as session:
            await session.execute(delete(RateWindow).where(RateWindow.key == key, RateWindow.window != window))
            session.add(RateWindow(key=key, window=window, hits=0))
    except IntegrityError:  # another process opened it first
        pass


async def take(session: AsyncSession, key: str, window: str, limit: int) -> bool:
    """Count one hit of ``key`` in ``window`` if it is under ``limit``; False when it is not.
    The window must be open (``open_window``); runs in the caller's transaction."""
    bumped = await session.execute(
        update(RateWindow)
        .where(RateWindow.key == key, RateWindow.window == window, RateWindow.hits < limit)
        .values(hits=RateWindow.hits + 1)
    )
    return bool(bumped.rowcount)  # type: ignore[attr-defined]
