"""The database's fixed-window counters at a window's boundary: a request that computed the
old window and counts after another opened the new one is counted, not refused (the share-link
sign-in test failed this way when its burst crossed a minute), and opening a window never
drops a later one."""

from __future__ import annotations

import asyncio

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import RateWindow
from services.chat.callers.rate_windows import prune_earlier_windows, take

Sessions = async_sessionmaker[AsyncSession]
OLD, NEW = "2026-12-01T03:26", "2026-12-01T03:27"


async def hits(sessions: Sessions, key: str) -> dict[str, int]:
    async with sessions() as session:
        rows = await session.execute(select(RateWindow.window, RateWindow.hits).where(RateWindow.key == key))
    return {window: hits for window, hits in rows}


async def take_in(sessions: Sessions, key: str, window: str, limit: int) -> bool:
    async with sessions.begin() as session:
        return await take(session, key, window, limit)


async def test_a_hit_in_a_window_another_request_pruned_is_counted(sessions: Sessions, unique: str) -> None:
    key = f"sign-in:{unique}"
    await prune_earlier_windows(sessions, key, OLD)
    assert await take_in(sessions, key, OLD, 60)
    await prune_earlier_windows(sessions, key, NEW)  # the first request of the next minute
    assert await hits(sessions, key) == {}
    assert await take_in(sessions, key, OLD, 60)  # a late request of the old minute: counted
    assert await take_in(sessions, key, NEW, 60)
    assert await hits(sessions, key) == {OLD: 1, NEW: 1}


async def test_opening_an_earlier_window_late_keeps_the_later_ones(sessions: Sessions, unique: str) -> None:
    key = f"sign-in:{unique}"
    assert await take_in(sessions, key, NEW, 60)
    await prune_earlier_windows(sessions, key, OLD)
    assert await hits(sessions, key) == {NEW: 1}


async def test_concurrent_hits_stop_at_the_limit_whoever_makes_the_row(sessions: Sessions, unique: str) -> None:
    key = f"questions:{unique}"
    counted = await asyncio.gather(*(take_in(sessions, key, NEW, 7) for _ in range(20)))
    assert counted.count(True) == 7 and await hits(sessions, key) == {NEW: 7}
    assert not await take_in(sessions, f"zero:{unique}", NEW, 0)
    assert await hits(sessions, f"zero:{unique}") == {}
