"""Migrations match the models, and the chat lease admits one holder at a time."""

from __future__ import annotations

import asyncio
import uuid

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.engine import sync_url
from kbcore.db.lease import ChatBusy, LeaseStore, new_holder
from kbcore.db.tables import Base, ChatLock


def test_migrated_schema_equals_the_models(database_url: str) -> None:
    engine = create_engine(sync_url(database_url))
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    engine.dispose()
    assert diff == [], f"models and migrations disagree; add a migration: {diff}"


async def test_only_one_of_many_concurrent_holders_gets_the_lease(sessions: async_sessionmaker[AsyncSession]) -> None:
    leases = LeaseStore(sessions, ttl=30)
    chat_id = str(uuid.uuid4())
    holders = [new_holder("t") for _ in range(10)]
    results = await asyncio.gather(*(leases.try_acquire(chat_id, h, "question") for h in holders))
    assert results.count(True) == 1
    winner = holders[results.index(True)]
    assert await leases.is_held_by(chat_id, winner)
    await leases.release(chat_id, winner)
    assert await leases.try_acquire(chat_id, holders[0], "question")


async def test_an_expired_lease_is_taken_over_and_the_old_holder_cannot_renew(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    leases = LeaseStore(sessions, ttl=30)
    chat_id = str(uuid.uuid4())
    assert await leases.try_acquire(chat_id, "dead", "question")
    async with sessions.begin() as session:
        lock = await session.scalar(select(ChatLock).where(ChatLock.chat_id == chat_id))
        assert lock is not None
        lock.expires_at = lock.acquired_at.replace(year=2000)
    assert await leases.try_acquire(chat_id, "alive", "question")
    assert not await leases.renew(chat_id, "dead")
    assert await leases.renew(chat_id, "alive")


async def test_hold_refuses_a_busy_chat_and_releases_at_the_end(sessions: async_sessionmaker[AsyncSession]) -> None:
    leases = LeaseStore(sessions, ttl=30)
    chat_id = str(uuid.uuid4())
    async with leases.hold(chat_id, "first", "question"):
        try:
            async with leases.hold(chat_id, "second", "compaction"):
                raise AssertionError("a second holder entered")
        except ChatBusy:
            pass
    assert await leases.try_acquire(chat_id, "second", "compaction")


async def test_a_holder_learns_that_its_lease_was_taken_over(sessions: async_sessionmaker[AsyncSession]) -> None:
    leases = LeaseStore(sessions, ttl=0.3)
    chat_id = str(uuid.uuid4())
    async with leases.hold(chat_id, "stalled", "question") as lost:
        async with sessions.begin() as session:
            lock = await session.scalar(select(ChatLock).where(ChatLock.chat_id == chat_id))
            assert lock is not None
            lock.expires_at = lock.acquired_at.replace(year=2000)
        assert await leases.try_acquire(chat_id, "successor", "question")
        await asyncio.wait_for(lost.wait(), timeout=5)
    assert await leases.is_held_by(chat_id, "successor"), "the stalled holder's exit must not release the successor"


async def test_a_record_taken_over_is_not_overwritten_by_its_old_holder(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    from kbcore.db.tables import Application, Chat, ChatRecord
    from services.chat.store import ChatStore, NewQuestion

    store = ChatStore(sessions)
    async with sessions.begin() as session:
        application = Application(name="lease-test")
        session.add(application)
        await session.flush()
        chat = Chat(application_id=application.id)
        session.add(chat)
    old = (await store.record_question(NewQuestion(chat.id, "问题", "old-holder", re_chat=False))).record
    # The new holder's question marks the old one interrupted.
    await store.record_question(NewQuestion(chat.id, "新问题", "new-holder", re_chat=False))
    assert await store.finish_record(old.id, answer="迟到的回答", status="answered") is False
    async with sessions() as session:
        saved = await session.get(ChatRecord, old.id)
    assert saved is not None and (saved.status, saved.answer) == ("interrupted", "")
