"""The chat lease: one generation or compaction per chat at a time, across every process.

A row in ``chat_lock`` names its holder and an expiry. Taking it succeeds when there is no
row, the row has expired (its holder died), or it is already ours. The holder renews it
while working and deletes it at the end; a holder that dies simply stops renewing.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import uuid
from collections.abc import AsyncIterator

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.models import ChatLock, utcnow

log = logging.getLogger(__name__)


class ChatBusy(Exception):
    """Another question or compaction holds this chat."""


def new_holder(purpose: str) -> str:
    return f"{purpose}-{uuid.uuid4().hex}"


class LeaseStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], ttl: float) -> None:
        self._sessions = sessions
        self.ttl = ttl

    async def try_acquire(self, chat_id: str, holder: str, purpose: str) -> bool:
        now = utcnow()
        expires = now + dt.timedelta(seconds=self.ttl)
        async with self._sessions.begin() as session:
            taken = await session.execute(
                update(ChatLock)
                .where(ChatLock.chat_id == chat_id, (ChatLock.expires_at < now) | (ChatLock.holder == holder))
                .values(holder=holder, purpose=purpose, acquired_at=now, expires_at=expires, stop_requested=False)
            )
            if taken.rowcount:  # type: ignore[attr-defined]
                return True
        try:
            async with self._sessions.begin() as session:
                session.add(
                    ChatLock(chat_id=chat_id, holder=holder, purpose=purpose, acquired_at=now, expires_at=expires)
                )
            return True
        except IntegrityError:
            return False

    async def renew(self, chat_id: str, holder: str) -> bool:
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(ChatLock)
                .where(ChatLock.chat_id == chat_id, ChatLock.holder == holder)
                .values(expires_at=utcnow() + dt.timedelta(seconds=self.ttl))
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def release(self, chat_id: str, holder: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(delete(ChatLock).where(ChatLock.chat_id == chat_id, ChatLock.holder == holder))

    async def request_stop(self, chat_id: str) -> bool:
        """Ask whichever process holds the chat to stop; False when nothing holds it."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(ChatLock)
                .where(ChatLock.chat_id == chat_id, ChatLock.expires_at >= utcnow())
                .values(stop_requested=True)
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def stop_requested(self, chat_id: str, holder: str) -> bool:
        async with self._sessions() as session:
            flag = await session.scalar(
                select(ChatLock.stop_requested).where(ChatLock.chat_id == chat_id, ChatLock.holder == holder)
            )
            return bool(flag)

    async def is_held_by(self, chat_id: str, holder: str) -> bool:
        async with self._sessions() as session:
            row = await session.scalar(
                select(ChatLock.chat_id).where(
                    ChatLock.chat_id == chat_id, ChatLock.holder == holder, ChatLock.expires_at >= utcnow()
                )
            )
            return row is not None

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: str, holder: str, purpose: str) -> AsyncIterator[asyncio.Event]:
        """Hold the chat for the block, renewing every third of the TTL; ChatBusy when taken.

        Yields an event that is set if the lease is lost (a stall longer than the TTL let another
        holder take over): the work under it should stop, since it no longer owns the chat.
        """
        if not await self.try_acquire(chat_id, holder, purpose):
            raise ChatBusy(chat_id)
        lost = asyncio.Event()
        renewer = asyncio.create_task(self._keep_renewed(chat_id, holder, lost))
        try:
            yield lost
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
            await asyncio.shield(self.release(chat_id, holder))

    async def _keep_renewed(self, chat_id: str, holder: str, lost: asyncio.Event) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                if not await self.renew(chat_id, holder):
                    log.warning("lease on chat %s was lost by %s", chat_id, holder)
                    lost.set()
                    return
            except Exception:  # a database hiccup must not kill the question; the next tick retries
                log.exception("renewing the lease on chat %s failed", chat_id)
