"""Applications, chats and records in the SQL database."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import Executable

from kbcore.db.audit import record_action
from kbcore.db.engine import run_read, run_write
from kbcore.db.lease import INTERRUPTED_ERROR, ChatBusy, LeaseStore, free_dead_holders
from kbcore.db.lookup import require_row
from kbcore.db.tables import Application, Chat, ChatLock, ChatRecord, RecordSource, RecordStatus, UserGrant, utcnow
from kbcore.errors import NotFound
from kbcore.words.said import said
from services.chat.accounts.grants import APPLICATION
from services.chat.accounts.refusals import already_exists
from services.chat.audit_details import changed_fields, detail_of
from services.chat.record_statements import (
    ANY_EARLIER,
    CHAT_AND_APPLICATION,
    CLOSE_UNSAVED,
    FINISH_RUNNING,
    FIRST_QUESTION_AS_ABSTRACT,
    INSERT_RECORD,
    INTERRUPT_RUNNING,
)


@dataclass(frozen=True)
class NewQuestion:
    """A question's record as it is first written (``running``): the fields both ways of starting
    a question take, ``ChatStore.begin_question`` (which takes the chat's lease with it) and
    ``ChatStore.record_question`` (whose caller holds the lease already), so that the two are
    always given the same ones."""

    chat_id: str
    question: str
    holder: str  # the lease holder that runs it
    re_chat: bool  # the previous answer leaves the history
    source: str = RecordSource.CHAT
    origin: Mapping[str, str] | None = None  # the log's columns for who asked and through what
    counted: Executable | None = None  # counts the question against its credential, in the same transaction


@dataclass(frozen=True)
class StartedQuestion:
    record: ChatRecord
    first_in_chat: bool  # no earlier record in the chat: the question has no history


class ChatStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        """For the modules that read records their own way (the log), through the same database."""
        return self._sessions

    # applications
    async def create_application(self, application: Application, grant_to: str = "") -> Application:
        """Save a new application, with its audit row. With ``grant_to`` (an editor creating it),
        grant it to that user in the same transaction, and refuse an id already in use: only
        those who may change every application replace one by creating it again (the demo
        seeder does, by its id)."""
        async with self._sessions.begin() as session:
            existing = await session.get(Application, application.id) if application.id else None
            if existing is not None and grant_to:
                raise already_exists(
                    said("application_id_exists_already_choose_another", application_id=application.id)
                )
            if existing is None:
                session.add(application)
                saved = application
            else:
                saved = await session.merge(application)
            await session.flush()
            if grant_to:
                session.add(UserGrant(user_id=grant_to, object_kind=APPLICATION, object_id=saved.id))
            replaced = "replaced the application with this id" if existing is not None else ""
            record_action(session, "application.create", "application", saved.id, saved.name, replaced)
        return saved

    async def update_application(self, application_id: str, fields: Mapping[str, Any]) -> Application:
        """Set ``fields`` on the application, with an audit row naming the fields that changed."""
        async with self._sessions.begin() as session:
            row = await session.get(Application, application_id) if application_id else None
            if row is None:
                raise NotFound(said("application_does_not_exist", application_id=application_id))
            changed = changed_fields({name: getattr(row, name) for name in fields}, fields)
            for name, value in fields.items():
                setattr(row, name, value)
            record_action(session, "application.update", "application", row.id, row.name, detail_of(changed))
        return row

    async def get_application(self, application_id: str) -> Application:
        return await require_row(
            self._sessions,
            Application,
            application_id,
            lambda key: said("application_does_not_exist", application_id=key),
        )

    async def list_applications(self, among: frozenset[str] | None = None) -> list[Application]:
        """Every application, oldest first; only those in ``among`` when it is given."""
        query = select(Application).order_by(Application.created_at)
        if among is not None:
            query = query.where(Application.id.in_(sorted(among)))
        async with self._sessions() as session:
            return list((await session.scalars(query)).all())

    # chats
    async def open_chat(self, application_id: str, visitor_id: str | None) -> Chat:
        await self.get_application(application_id)

        def insert(session: Session) -> Chat:
            chat = Chat(application_id=application_id, visitor_id=visitor_id)
            session.add(chat)
            session.flush()
            return chat

        return await run_write(self._sessions, insert)

    async def get_chat(self, chat_id: str) -> Chat:
        return await require_row(self._sessions, Chat, chat_id, lambda key: said("chat_does_not_exist", chat_id=key))

    async def get_chat_and_application(self, chat_id: str) -> tuple[Chat, Application]:
        """A chat and its application in one query (every question reads both)."""
        params = {"b_chat_id": chat_id}
        row = await run_read(self._sessions, lambda session: session.execute(CHAT_AND_APPLICATION, params).first())
        if row is None:
            raise NotFound(said("chat_does_not_exist", chat_id=chat_id))
        return row[0], row[1]

    # records
    async def record_question(self, asked: NewQuestion) -> StartedQuestion:
        """Insert the question as ``running`` before anything else runs, so nothing is lost; the
        caller already holds the chat's lease.

        Taking the lease proved that any earlier holder is gone, so records it left running are
        marked ``interrupted`` here; a re-chat takes the previous answer out of the history.
        """
        return await run_write(self._sessions, lambda session: _start(session, asked))

    async def begin_question(self, leases: LeaseStore, asked: NewQuestion) -> StartedQuestion:
        """Take the chat's lease and insert the record in one transaction (ChatBusy when the
        chat is held): one commit instead of two before the answer can start."""

        def work(session: Session) -> StartedQuestion:
            if not leases.acquire(session, asked.chat_id, asked.holder, "question"):
                raise ChatBusy(asked.chat_id)
            return _start(session, asked)

        return await run_write(self._sessions, work)

    async def finish_record(self, record_id: int, **values: Any) -> bool:
        """Save the outcome, only while the record is still ``running``: a holder that lost its
        lease must not overwrite the ``interrupted`` its successor wrote. False when it did not."""
        params = {"b_record_id": record_id, **values}
        return await run_write(
            self._sessions, lambda session: bool(session.connection().execute(FINISH_RUNNING, params).rowcount)
        )

    async def close_unsaved(self, record_id: int, **values: Any) -> bool:
        """Close a record whose outcome could not be saved when its answer ended, as
        ``finish_record`` would, and also over a sweep that closed it meanwhile on the guess that
        its process had died (``CLOSE_UNSAVED``): the process saying what happened is alive."""
        params = {"b_record_id": record_id, **values}
        return await run_write(
            self._sessions, lambda session: bool(session.connection().execute(CLOSE_UNSAVED, params).rowcount)
        )

    async def sweep_interrupted(self) -> int:
        """Mark ``interrupted`` every ``running`` record whose holder no longer holds its chat (it
        died: its lease expired or is gone), keeping what was saved; how many were marked. A
        record and its lease are written in one transaction, so a question being started is
        never caught here; one whose holder lost its lease had already lost its claim to save.

        First, in the same transaction, the leases of holders this host proves dead are freed
        (``free_dead_holders``, which closes their records): their chats are free now, not when
        the leases would have expired."""
        live = (
            select(ChatLock.chat_id)
            .where(
                ChatLock.chat_id == ChatRecord.chat_id,
                ChatLock.holder == ChatRecord.holder,
                ChatLock.expires_at >= utcnow(),
            )
            .exists()
        )
        statement = (
            update(ChatRecord)
            .where(ChatRecord.status == RecordStatus.RUNNING, ~live)
            .values(status=RecordStatus.INTERRUPTED, error=INTERRUPTED_ERROR)
            .execution_options(synchronize_session=False)
        )

        def sweep(session: Session) -> int:
            _, closed = free_dead_holders(session)
            return closed + int(session.execute(statement).rowcount)  # type: ignore[attr-defined]

        return await run_write(self._sessions, sweep)

    async def get_record(self, chat_id: str, record_id: int) -> ChatRecord:
        async with self._sessions() as session:
            record = await session.get(ChatRecord, record_id)
        if record is None or record.chat_id != chat_id:
            raise NotFound(said("record_does_not_exist_chat", record_id=record_id, chat_id=chat_id))
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

    async def list_records(
        self, chat_id: str, page: int, size: int, *, newest_first: bool = False
    ) -> tuple[list[ChatRecord], int]:
        """A page of the chat's records in the order they were asked, or from the newest back."""
        order = ChatRecord.id.desc() if newest_first else ChatRecord.id
        async with self._sessions() as session:
            total = await session.scalar(select(func.count(ChatRecord.id)).where(ChatRecord.chat_id == chat_id))
            rows = await session.scalars(
                select(ChatRecord)
                .where(ChatRecord.chat_id == chat_id)
                .order_by(order)
                .offset((page - 1) * size)
                .limit(size)
            )
            return list(rows.all()), int(total or 0)


def _start(session: Session, asked: NewQuestion) -> StartedQuestion:
    chat_id, question = asked.chat_id, asked.question
    connection = session.connection()
    chat = {"b_chat_id": chat_id}
    connection.execute(INTERRUPT_RUNNING, chat)
    earlier = connection.execute(ANY_EARLIER, chat).scalar()
    if asked.re_chat:
        last = session.scalar(
            select(ChatRecord.id)
            .where(ChatRecord.chat_id == chat_id, ChatRecord.in_history.is_(True))
            .order_by(ChatRecord.id.desc())
            .limit(1)
        )
        if last is not None:
            session.execute(update(ChatRecord).where(ChatRecord.id == last).values(in_history=False))
    values = {
        "chat_id": chat_id,
        "question": question,
        "holder": asked.holder,
        "status": RecordStatus.RUNNING,
        "source": asked.source,
        **(asked.origin or {}),
    }
    record_id = connection.execute(INSERT_RECORD, values).scalar_one()
    if asked.counted is not None:  # the asking credential's use count, in the same transaction
        session.execute(asked.counted)
    connection.execute(FIRST_QUESTION_AS_ABSTRACT, {**chat, "b_abstract": question[:200]})
    # The flow reads the record's id and holder; a transient object saves a reload.
    return StartedQuestion(ChatRecord(id=record_id, **values), earlier is None)
