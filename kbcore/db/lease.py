"""The chat lease: one generation or compaction per chat at a time, across every process.

A row in ``chat_lock`` names its holder and an expiry. Taking it succeeds when there is no
row, the row has expired (its holder died), or it is already ours. The holder renews it
while working and deletes it at the end; a holder that dies simply stops renewing.

A holder's name also says which process took it (``kbcore.process.process_identity``), so a
holder killed on this host is not waited out. Taking the lease when the chat is held decides
once whether ``/proc`` proves the holder dead; if so, one statement takes the lease over,
conditional on that very holder still being named (as if it had expired), and that holder's
``running`` records are closed ``interrupted`` in the same transaction, with what was saved. A
Stop frees such a lease the same way, and so does a chat service when it starts and with each
sweep (``free_dead_holders``). A holder on another host, in another pid namespace or under
another user, or one ``/proc`` cannot judge, is never taken for dead: its lease is taken over
only once it has expired (``KB_LOCK_TTL``), as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import logging
import uuid
from collections.abc import AsyncIterator

from sqlalchemy import Connection, Executable, Table, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import RECORD_TABLE, ChatLock, RecordStatus, utcnow
from kbcore.errors import Conflict
from kbcore.process import process_identity
from kbcore.words.said import said

log = logging.getLogger(__name__)

RELEASE_EVERY = 0.5
_releasing: set[asyncio.Task[None]] = set()

# Taking and releasing run on every question: Core statements on the table with bound
# parameters, built once, so SQLAlchemy neither rebuilds nor re-keys them per call (building an
# ORM statement cost more CPU than SQLite's own work).
_LOCKS: Table = ChatLock.__table__  # type: ignore[assignment]
_RELEASE = delete(_LOCKS).where(_LOCKS.c.chat_id == bindparam("b_chat_id"), _LOCKS.c.holder == bindparam("b_holder"))

# What a record says when the process answering it died (here and in the chat service's sweep).
INTERRUPTED_ERROR = said("process_answering_stopped")
# A dead holder's lease, only while that holder is still the one named: taken over (the same
# columns the upsert sets) or freed; and the records it left running, closed.
_HOLDER = select(_LOCKS.c.holder).where(_LOCKS.c.chat_id == bindparam("b_chat_id"))
_HOLDERS = select(_LOCKS.c.chat_id, _LOCKS.c.holder)
_OF_DEAD = (_LOCKS.c.chat_id == bindparam("b_chat_id")) & (_LOCKS.c.holder == bindparam("b_dead"))
_TAKE_FROM_DEAD = (
    update(_LOCKS)
    .where(_OF_DEAD)
    .values(
        holder=bindparam("b_holder"),
        purpose=bindparam("b_purpose"),
        acquired_at=bindparam("b_acquired_at"),
        expires_at=bindparam("b_expires_at"),
        stop_requested=False,
    )
)
_FREE_FROM_DEAD = delete(_LOCKS).where(_OF_DEAD)
_CLOSE_DEAD_RECORDS = (
    update(RECORD_TABLE)
    .where(
        RECORD_TABLE.c.chat_id == bindparam("b_chat_id"),
        RECORD_TABLE.c.holder == bindparam("b_dead"),
        RECORD_TABLE.c.status == RecordStatus.RUNNING,
    )
    .values(status=RecordStatus.INTERRUPTED, error=INTERRUPTED_ERROR)
)
# The holder's name: "<purpose>-<random>@<process identity>", within the 64 characters of its
# column (the purpose is only there to read, so a long one is cut).
_PURPOSE_IN_NAME = 12


@functools.cache
def _take(dialect_name: str) -> Executable:
    """Insert the lease row, or take over one that expired or is already ours (an upsert in
    the dialect's own words); RETURNING, not rowcount: psycopg reports no rowcount for an upsert."""
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    insert = dialect.insert(_LOCKS)
    taken = ("holder", "purpose", "acquired_at", "expires_at", "stop_requested")
    statement = insert.on_conflict_do_update(
        index_elements=[_LOCKS.c.chat_id],
        set_={name: insert.excluded[name] for name in taken},
        where=(_LOCKS.c.expires_at < insert.excluded.acquired_at) | (_LOCKS.c.holder == insert.excluded.holder),
    )
    returning: Executable = statement.returning(_LOCKS.c.chat_id)
    return returning


class ChatBusy(Conflict):
    """Another question or compaction holds this chat: refused, never queued."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(said("chat_already_answering_question_being_compacted"))
        self.chat_id = chat_id


def new_holder(purpose: str) -> str:
    """A name for one taking of a lease: unique, and naming the process that took it, so that
    another process on this host can prove it dead (``holder_is_dead``)."""
    name = f"{purpose[:_PURPOSE_IN_NAME]}-{uuid.uuid4().hex[:12]}"
    me = process_identity.current()
    return f"{name}@{me.text()}" if me is not None else name


def holder_is_dead(holder: str) -> bool:
    """Whether ``/proc`` on this host proves the holder's process gone; never for a name that
    carries no identity (an older one's) or another host's."""
    _, at, identity = holder.rpartition("@")
    parsed = process_identity.parse(identity) if at else None
    return parsed is not None and process_identity.is_dead(parsed)


def free_dead_holders(session: Session) -> tuple[int, int]:
    """Free every lease whose holder this host proves dead, closing the records it left running,
    in the caller's transaction: (leases freed, records closed). Lease rows are few (held
    chats), and judging a holder reads one small file."""
    connection = session.connection()
    freed = closed = 0
    for chat_id, holder in connection.execute(_HOLDERS).all():
        records = _free_from_dead(connection, chat_id, holder) if holder_is_dead(holder) else None
        if records is not None:
            freed, closed = freed + 1, closed + records
    return freed, closed


class LeaseStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], ttl: float) -> None:
        self._sessions = sessions
        self.ttl = ttl

    def acquire(self, session: Session, chat_id: str, holder: str, purpose: str) -> bool:
        """Take the lease inside the caller's write transaction (a unit of work of
        ``run_write``), so whatever else it writes (the question's record) commits with it or
        not at all. One statement: insert the row, or take over one that expired or is
        already ours. When another holds it and this host proves that holder dead, a second
        one takes it from that holder and closes its records; False when another holds it
        (alive, or not provably dead)."""
        now = utcnow()
        values = {
            "chat_id": chat_id,
            "holder": holder,
            "purpose": purpose,
            "acquired_at": now,
            "expires_at": now + dt.timedelta(seconds=self.ttl),
            "stop_requested": False,
        }
        connection = session.connection()
        if connection.execute(_take(session.get_bind().dialect.name), values).first() is not None:
            return True
        # Held: the upsert left the row locked (PostgreSQL locks it even when its WHERE is false;
        # SQLite writes one at a time), so what is read here holds until the commit.
        dead = _dead_holder(connection, chat_id)
        if dead is None:
            return False
        taken = {
            "b_chat_id": chat_id,
            "b_dead": dead,
            "b_holder": holder,
            "b_purpose": purpose,
            "b_acquired_at": now,
            "b_expires_at": values["expires_at"],
        }
        if not connection.execute(_TAKE_FROM_DEAD, taken).rowcount:
            return False
        _close_dead_records(connection, chat_id, dead)
        return True

    async def try_acquire(self, chat_id: str, holder: str, purpose: str) -> bool:
        return await run_write(self._sessions, lambda session: self.acquire(session, chat_id, holder, purpose))

    async def renew(self, chat_id: str, holder: str) -> bool:
        statement = (
            update(ChatLock)
            .where(ChatLock.chat_id == chat_id, ChatLock.holder == holder)
            .values(expires_at=utcnow() + dt.timedelta(seconds=self.ttl))
        )
        return await run_write(self._sessions, lambda session: _changed(session, statement))

    async def release(self, chat_id: str, holder: str) -> None:
        params = {"b_chat_id": chat_id, "b_holder": holder}
        await run_write(self._sessions, lambda session: session.connection().execute(_RELEASE, params))

    async def request_stop(self, chat_id: str) -> bool:
        """Ask whichever process holds the chat to stop; False when nothing holds it. A holder
        this host proves dead cannot stop: its lease is freed here instead (its record closed
        ``interrupted``), so the chat is free at once and nothing was running to stop."""
        statement = (
            update(ChatLock)
            .where(ChatLock.chat_id == chat_id, ChatLock.expires_at >= utcnow())
            .values(stop_requested=True)
        )

        def ask(session: Session) -> bool:
            connection = session.connection()
            dead = _dead_holder(connection, chat_id)
            if dead is not None and _free_from_dead(connection, chat_id, dead) is not None:
                return False
            return _changed(session, statement)

        return await run_write(self._sessions, ask)

    async def expiry(self, chat_id: str) -> dt.datetime | None:
        """When the chat's lease expires unless renewed; None when nothing holds it. A holder that
        sees a stop request renews at once, so a later expiry is its acknowledgement."""
        query = select(ChatLock.expires_at).where(ChatLock.chat_id == chat_id, ChatLock.expires_at >= utcnow())
        return await run_read(self._sessions, lambda session: session.scalar(query))

    async def stop_requested(self, chat_id: str, holder: str) -> bool:
        query = select(ChatLock.stop_requested).where(ChatLock.chat_id == chat_id, ChatLock.holder == holder)
        return bool(await run_read(self._sessions, lambda session: session.scalar(query)))

    async def stop_requests(self) -> set[tuple[str, str]]:
        """Every (chat, holder) asked to stop, across all processes: one cheap query that a
        process's stop watch runs for all the questions it answers (rows are few: held chats)."""
        query = select(ChatLock.chat_id, ChatLock.holder).where(ChatLock.stop_requested.is_(True))
        rows = await run_read(self._sessions, lambda session: session.execute(query).all())
        return {(chat_id, holder) for chat_id, holder in rows}

    async def is_held_by(self, chat_id: str, holder: str) -> bool:
        query = select(ChatLock.chat_id).where(
            ChatLock.chat_id == chat_id, ChatLock.holder == holder, ChatLock.expires_at >= utcnow()
        )
        return await run_read(self._sessions, lambda session: session.scalar(query)) is not None

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: str, holder: str, purpose: str) -> AsyncIterator[asyncio.Event]:
        """Hold the chat for the block, renewing every third of the TTL; ChatBusy when taken.

        Yields an event that is set if the lease is lost (a stall longer than the TTL let another
        holder take over): the work under it should stop, since it no longer owns the chat.
        """
        if not await self.try_acquire(chat_id, holder, purpose):
            raise ChatBusy(chat_id)
        async with self.held(chat_id, holder) as lost:
            yield lost

    @contextlib.asynccontextmanager
    async def held(self, chat_id: str, holder: str) -> AsyncIterator[asyncio.Event]:
        """``hold`` for a lease already taken (by ``acquire``): renewed while the block runs,
        released at its end, whatever way it ends."""
        lost = asyncio.Event()
        renewer = asyncio.create_task(self._keep_renewed(chat_id, holder, lost))
        try:
            yield lost
        finally:
            renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewer
            try:
                await asyncio.shield(self.release(chat_id, holder))
            except Exception as error:
                # The work under the lease has ended and said so; a release that fails (the
                # database is away) must not turn that into an error after the fact. It is tried
                # again in the background, so the chat is free once the database takes writes
                # again rather than when the unrenewed lease expires.
                log.warning("releasing the lease on chat %s failed; retrying in the background: %s", chat_id, error)
                self._release_later(chat_id, holder)

    def _release_later(self, chat_id: str, holder: str) -> None:
        task = asyncio.create_task(self._keep_releasing(chat_id, holder))
        _releasing.add(task)
        task.add_done_callback(_releasing.discard)

    async def _keep_releasing(self, chat_id: str, holder: str) -> None:
        """Every half second until released, or until the lease has expired by itself."""
        deadline = asyncio.get_running_loop().time() + self.ttl
        while asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(RELEASE_EVERY)
            with contextlib.suppress(Exception):
                await self.release(chat_id, holder)
                return

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


def _dead_holder(connection: Connection, chat_id: str) -> str | None:
    """The chat's holder when this host proves it dead, else None."""
    holder = connection.execute(_HOLDER, {"b_chat_id": chat_id}).scalar()
    return holder if holder is not None and holder_is_dead(holder) else None


def _free_from_dead(connection: Connection, chat_id: str, dead: str) -> int | None:
    """Free the chat's lease if ``dead`` still holds it: how many of its records were closed, or
    None when it no longer held the chat (released, or already taken over)."""
    if not connection.execute(_FREE_FROM_DEAD, {"b_chat_id": chat_id, "b_dead": dead}).rowcount:
        return None
    return _close_dead_records(connection, chat_id, dead)


def _close_dead_records(connection: Connection, chat_id: str, dead: str) -> int:
    """The dead holder's records still ``running``, closed as the sweep closes them."""
    closed = int(connection.execute(_CLOSE_DEAD_RECORDS, {"b_chat_id": chat_id, "b_dead": dead}).rowcount)
    log.warning(
        "chat %s was held by %s, whose process has died: its lease goes now, not when it expires", chat_id, dead
    )
    return closed


def _changed(session: Session, statement: Executable) -> bool:
    """Whether an UPDATE or DELETE touched a row."""
    return bool(session.execute(statement).rowcount)  # type: ignore[attr-defined]
