"""Applications, chats and records in the SQL database."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.lookup import require_row
from kbcore.db.models import Application, Chat, ChatRecord, RecordStatus, utcnow
from kbcore.rpc import NotFound


class ChatStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    # applications
    async def save_application(self, application: Application) -> Application:
        async with self._sessions.begin() as session:
            return await session.merge(application)

    async def get_application(self, application_id: str) -> Application:
        return await require_row(self._sessions, Application, application_id, "application")

    async def list_applications(self) -> list[Application]:
        async with self._sessions() as session:
            return list((await session.scalars(select(Application).order_by(Application.created_at))).all())

    # chats
    async def open_chat(self, application_id: str, visitor_id: str | None) -> Chat:
        await self.get_application(application_id)
        async with self._sessions.begin() as session:
            chat = Chat(application_id=application_id, visitor_id=visitor_id)
            session.add(chat)
        return chat

    async def get_chat(self, chat_id: str) -> Chat:
        return await require_row(self._sessions, Chat, chat_id, "chat")

    # records
    async def start_record(self, chat_id: str, question: str, holder: str, re_chat: bool) -> ChatRecord:
        """Insert the question as ``running`` before anything else runs, so nothing is lost.

        Taking the lease proved that any earlier holder is gone, so records it left running are
        marked ``interrupted`` here; a re-chat takes the previous answer out of the history.
        """
        async with self._sessions.begin() as session:
            await session.execute(
                update(ChatRecord)
                .where(ChatRecord.chat_id == chat_id, ChatRecord.status == RecordStatus.RUNNING.value)
                .values(status=RecordStatus.INTERRUPTED.value, error="the process answering it stopped")
            )
            if re_chat:
                last = await session.scalar(
                    select(ChatRecord.id)
                    .where(ChatRecord.chat_id == chat_id, ChatRecord.in_history.is_(True))
                    .order_by(ChatRecord.id.desc())
                    .limit(1)
                )
                if last is not None:
                    await session.execute(update(ChatRecord).where(ChatRecord.id == last).values(in_history=False))
            record = ChatRecord(chat_id=chat_id, question=question, holder=holder, status=RecordStatus.RUNNING.value)
            session.add(record)
            chat = await session.get(Chat, chat_id)
            if chat is not None and not chat.abstract:
                chat.abstract = question[:200]
        return record

    async def finish_record(self, record_id: int, **values: Any) -> bool:
        """Save the outcome, only while the record is still ``running``: a holder that lost its
        lease must not overwrite the ``interrupted`` its successor wrote. False when it did not."""
        async with self._sessions.begin() as session:
            result = await session.execute(
                update(ChatRecord)
                .where(ChatRecord.id == record_id, ChatRecord.status == RecordStatus.RUNNING.value)
                .values(**values)
            )
            return bool(result.rowcount)  # type: ignore[attr-defined]

    async def get_record(self, chat_id: str, record_id: int) -> ChatRecord:
        async with self._sessions() as session:
            record = await session.get(ChatRecord, record_id)
        if record is None or record.chat_id != chat_id:
            raise NotFound(f"record {record_id} does not exist in chat {chat_id}")
        return record

    async def export_records(self, application_id: str, limit: int) -> list[ChatRecord]:
        """Every record of an application's chats, oldest first, at most ``limit``."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(ChatRecord)
                .join(Chat, Chat.id == ChatRecord.chat_id)
                .where(Chat.application_id == application_id)
                .order_by(ChatRecord.id)
                .limit(limit)
            )
            return list(rows.all())

    async def list_records(self, chat_id: str, page: int, size: int) -> tuple[list[ChatRecord], int]:
        async with self._sessions() as session:
            total = await session.scalar(select(func.count(ChatRecord.id)).where(ChatRecord.chat_id == chat_id))
            rows = await session.scalars(
                select(ChatRecord)
                .where(ChatRecord.chat_id == chat_id)
                .order_by(ChatRecord.id)
                .offset((page - 1) * size)
                .limit(size)
            )
            return list(rows.all()), int(total or 0)


def elapsed_since(started: dt.datetime) -> float:
    return (utcnow() - started).total_seconds()
