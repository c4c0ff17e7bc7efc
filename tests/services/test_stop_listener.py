"""One stop watch per chat-service process: a Stop requested through the lease table reaches
the question it names, and only that one, and is acknowledged; a lost lease stops its question."""

from __future__ import annotations

import asyncio
import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.lease import LeaseStore, new_holder
from services.chat.answering.stop_listener import StopListener

POLL = 0.02
A_FEW_POLLS = 3 * POLL  # long enough for a stop that wrongly reached a question to show


async def test_a_requested_stop_reaches_only_its_question_and_is_acknowledged(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    leases = LeaseStore(sessions, ttl=30)
    watch = StopListener(leases, interval=POLL)
    chats = [str(uuid.uuid4()) for _ in range(3)]
    holders = [new_holder("ask") for _ in chats]
    stops = [asyncio.Event() for _ in chats]
    for chat_id, holder in zip(chats, holders, strict=True):
        assert await leases.try_acquire(chat_id, holder, "question")
    asked_at = await leases.expiry(chats[1])
    with (
        watch.watching(chats[0], holders[0], stops[0], asyncio.Event()),
        watch.watching(chats[1], holders[1], stops[1], asyncio.Event()),
        watch.watching(chats[2], holders[2], stops[2], asyncio.Event()),
    ):
        await asyncio.sleep(A_FEW_POLLS)
        assert not any(s.is_set() for s in stops)
        assert await leases.request_stop(chats[1])
        await asyncio.wait_for(stops[1].wait(), 2)
        await asyncio.sleep(A_FEW_POLLS)
    assert [s.is_set() for s in stops] == [False, True, False]
    acknowledged = await leases.expiry(chats[1])
    assert asked_at is not None and acknowledged is not None and acknowledged > asked_at


async def test_a_lost_lease_stops_its_question_and_the_watch_ends_when_nothing_is_watched(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    watch = StopListener(LeaseStore(sessions, ttl=30), interval=POLL)
    stop, lost = asyncio.Event(), asyncio.Event()
    with watch.watching(str(uuid.uuid4()), new_holder("ask"), stop, lost):
        lost.set()
        await asyncio.wait_for(stop.wait(), 2)
    poller = watch._poller
    assert poller is not None
    await asyncio.wait_for(poller, 2 * POLL + 1)  # nothing watched: the polling task has ended
    # A question watched later starts polling again.
    later, later_lost = asyncio.Event(), asyncio.Event()
    with watch.watching(str(uuid.uuid4()), new_holder("ask"), later, later_lost):
        later_lost.set()
        await asyncio.wait_for(later.wait(), 2)
