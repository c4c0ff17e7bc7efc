"""A visitor's own chats, as the share page's history shows them: newest first, titled by the
first question unless renamed, with how many questions each holds; renaming and deleting.

Deleting only hides a chat from its visitor (``Chat.hidden_at``): records are never deleted, so
the operator's log keeps what was asked. Chats with no question yet are not listed: a page opens
a chat before its first question, and an empty one is nothing to go back to.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import Chat, ChatRecord, utcnow
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_NAME_CHARS
from kbcore.text.control_chars import first_control
from kbcore.words.said import said


@dataclass(frozen=True)
class ChatEntry:
    """One line of the list."""

    id: str
    application_id: str
    abstract: str
    record_count: int
    created_at: dt.datetime
    last_asked_at: dt.datetime


def chat_title(raw: str) -> str:
    """A title a visitor typed, checked: not blank, at most ``MAX_NAME_CHARS`` characters, no
    control characters (a NUL cannot be stored by PostgreSQL, and none belongs in a title)."""
    title = raw.strip()
    if not title:
        raise InvalidRequest(said("chat_name_must_not_be_empty"))
    if len(title) > MAX_NAME_CHARS:
        raise InvalidRequest(
            said("chat_name_most_characters_one_has", max_name_chars=MAX_NAME_CHARS, len_title=len(title))
        )
    if first_control(title) is not None:
        raise InvalidRequest(said("chat_name_must_not_contain_control"))
    return title


class ChatList:
    """The listing and the two changes, on the chat service's database."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def page(self, application_id: str, visitor_id: str, page: int, size: int) -> tuple[list[ChatEntry], int]:
        """One page of the visitor's chats, and how many there are."""
        last_asked = func.max(ChatRecord.created_at)
        columns = (Chat.id, Chat.application_id, Chat.abstract, Chat.created_at)
        shown = (
            select(*columns, func.count(ChatRecord.id), last_asked)
            .join(ChatRecord, ChatRecord.chat_id == Chat.id)  # a chat with no question is no entry
            .where(Chat.application_id == application_id, Chat.visitor_id == visitor_id, Chat.hidden_at.is_(None))
            .group_by(*columns)
        )
        async with self._sessions() as session:
            total = await session.scalar(select(func.count()).select_from(shown.subquery()))
            rows = (
                await session.execute(
                    shown.order_by(last_asked.desc(), Chat.id.desc()).offset((page - 1) * size).limit(size)
                )
            ).all()
        entries = [ChatEntry(row[0], row[1], row[2], int(row[4]), row[3], row[5]) for row in rows]
        return entries, int(total or 0)

    async def rename(self, chat: Chat, title: str) -> ChatEntry:
        """Give ``chat`` (already checked visible to the caller) a new title."""
        async with self._sessions.begin() as session:
            await session.execute(update(Chat).where(Chat.id == chat.id).values(abstract=title))
            records, last_asked = (
                await session.execute(
                    select(func.count(), func.max(ChatRecord.created_at)).where(ChatRecord.chat_id == chat.id)
                )
            ).one()
        return ChatEntry(
            chat.id, chat.application_id, title, int(records), chat.created_at, last_asked or chat.created_at
        )

    async def hide(self, chat: Chat) -> None:
        """Take ``chat`` out of its visitor's list for good; its records stay."""
        async with self._sessions.begin() as session:
            await session.execute(update(Chat).where(Chat.id == chat.id).values(hidden_at=utcnow()))
