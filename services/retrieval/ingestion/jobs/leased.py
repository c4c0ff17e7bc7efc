"""The leased-job base: one queue class for every table of leased jobs. The ingestion queue
(``ingest_job``, ``jobs.queue``) and the change of a dataset's embedding model
(``embedding_job``, ``jobs.reembed_queue``) are two such tables; their shared columns are
declared once (``kbcore.db.tables.LeasedJobColumns``) and each queue names its table, reads a
claimed row its own way, and writes what its job's end means besides (a document, a dataset).

The lease contract. A job is claimed with a lease (holder + expiry, renewed with every progress
report), exactly as the chat lease works: a process that dies stops renewing, and after
``lease_seconds`` any replica takes the job over and resumes it. Claiming is one conditional
UPDATE (compare and set), preceded on PostgreSQL by ``FOR UPDATE SKIP LOCKED`` so that replicas
polling at the same moment pick different rows instead of queueing on one; on SQLite, where
writes are serialised, the conditional UPDATE alone decides. Every later write of the worker (a
report, the end) is conditional on still holding the lease, so a job taken over from a slow
process is never finished twice. Only processes of the same vector store (``store_key``) claim a
job: it writes into that store. Each claim counts an attempt; a job claimed more than
``MAX_ATTEMPTS`` times killed its holders that often, and its worker gives up on it.

Which job is claimed: the oldest of a dataset that has no job being worked on (by any process),
else the oldest of all. One dataset's 500 queued uploads then take one slot at a time while
another dataset's upload, queued after them, goes to the next slot that comes free: datasets take
turns instead of waiting behind each other. A preference, not a lock: replicas claiming at the
same moment may both start jobs of one dataset, and each job is still processed by exactly one.
"""

from __future__ import annotations

import abc
import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import EmbeddingJob, IngestJob, utcnow
from kbcore.words.said import Said

MAX_ATTEMPTS = 3  # a job that killed its process this many times is failed, not retried forever

Row = TypeVar("Row", IngestJob, EmbeddingJob)


class Claimed(Protocol):
    """A claimed job as its worker holds it: a dataclass (``claimed_as`` fills it from its row)
    with its row's id, which is what the queue needs of it."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def id(self) -> str: ...


Job = TypeVar("Job", bound=Claimed)


class Control:
    """What a progress report learned: go on, stop because of a cancel, or stop because the lease
    was lost (another process took the job over, or the document was deleted)."""

    GO = "go"
    CANCELLED = "cancelled"
    LOST = "lost"
    DELETED = "deleted"


def worn_out(attempts: int) -> bool:
    """Whether a job claimed ``attempts`` times is to be given up (failed) rather than worked on:
    every claim after the first followed a holder that died with it."""
    return attempts > MAX_ATTEMPTS


def claimed_as(kind: type[Job], row: IngestJob | EmbeddingJob, **rest: Any) -> Job:
    """The worker's ``kind`` of a job just claimed: each of its fields the row's column of the
    same name, but for ``rest``, what the row does not hold (read beside it, such as its
    document's name)."""
    columns = {f.name: getattr(row, f.name) for f in dataclasses.fields(kind) if f.name not in rest}
    return kind(**columns, **rest)


def release(row: IngestJob | EmbeddingJob, state: str, error: Said | None) -> None:
    """The job ends: its state and reason, and nobody holds it any more."""
    row.state, row.error, row.holder, row.lease_until = state, error, None, None


class LeasedQueue(abc.ABC, Generic[Row, Job]):
    """One table of leased jobs, claimed, renewed and ended under the lease contract above. A
    queue names its ``table`` and the ``active`` states of a job not finished yet (the queued one
    first), and says how a claimed row reads as its worker's job (``claimed``)."""

    table: type[Row]
    active: tuple[str, ...]

    def __init__(self, sessions: async_sessionmaker[AsyncSession], lease_seconds: float, store_key: str) -> None:
        self._sessions = sessions
        self.lease_seconds = lease_seconds
        self.store_key = store_key

    @abc.abstractmethod
    def claimed(self, session: Session, row: Row) -> Job | None:
        """The row just claimed, as its worker reads it; None: skip it (e.g. its document is gone)."""

    def reported(self, session: Session, job: Job, state: str) -> None:
        """What a report that renewed the lease writes besides the job's row, in its transaction."""

    def new_row(self, **fields: Any) -> Row:
        """A job for this store, queued: nobody holds it, nothing is done, it was never claimed,
        no cancel is asked and no error said. ``fields`` are what the table adds."""
        return self.table(
            store_key=self.store_key,
            state=self.active[0],
            done=0,
            total=0,
            attempts=0,
            cancel_requested=False,
            error=None,
            **fields,
        )

    async def claim(self, holder: str) -> Job | None:
        """The job ``claim_in`` picks, now ours, but claimed only when a read finds one waiting.
        Workers poll every second and nearly every poll finds nothing: as a read it takes no
        write lock, which on SQLite every process's writers share (the chat service's included,
        mid-question)."""
        if not await run_read(self._sessions, self.waiting):
            return None
        return await run_write(self._sessions, lambda session: self.claim_in(session, holder))

    async def report(self, job: Job, holder: str, state: str, done: int, total: int) -> str:
        """Record progress and renew the lease when the job is still ours to go on with (with
        ``reported``, in one transaction); says whether to go on (``Control``)."""

        def work(session: Session) -> str:
            control, row = self.look(session, job.id, holder)
            if control == Control.GO and row is not None:
                row.state, row.done, row.total, row.lease_until = state, done, total, self.expiry()
                self.reported(session, job, state)
            return control

        return await run_write(self._sessions, work)

    async def close_job(
        self, job: Job, holder: str, state: str, error: Said | None, then: Callable[[Session, Row], None]
    ) -> bool:
        """The job ends (finished, failed, cancelled, given up) with ``state`` and ``error`` and
        nobody holding it, and ``then`` writes what that means besides, in one transaction; False
        when it was no longer ours (taken over, or deleted with its document or dataset)."""

        def work(session: Session) -> bool:
            row = self.held(session, job.id, holder)
            if row is None:
                return False
            release(row, state, error)
            then(session, row)
            return True

        return await run_write(self._sessions, work)

    def expiry(self) -> dt.datetime:
        return utcnow() + dt.timedelta(seconds=self.lease_seconds)

    def _claimable(self, now: dt.datetime) -> ColumnElement[bool]:
        """A job not finished, for this store, that nobody holds or whose holder's lease ran out."""
        table = self.table
        return (
            table.state.in_(self.active)
            & (table.store_key == self.store_key)
            & (table.holder.is_(None) | (table.lease_until < now))
        )

    def waiting(self, session: Session) -> bool:
        """Whether a job could be claimed now (a read)."""
        return session.scalar(select(self.table.id).where(self._claimable(utcnow())).limit(1)) is not None

    def _busy_datasets(self, session: Session, now: dt.datetime) -> set[str]:
        """The datasets with a job someone works on now (held, its lease running), whatever its store."""
        table = self.table
        held = table.state.in_(self.active) & table.holder.is_not(None) & (table.lease_until >= now)
        return set(session.scalars(select(table.dataset_id).where(held).distinct()).all())

    def _candidates(self, session: Session, where: ColumnElement[bool]) -> list[str]:
        """The ids of the oldest few jobs ``where`` allows, locked for us on PostgreSQL."""
        table = self.table
        # SKIP LOCKED: concurrent claimers on PostgreSQL take different rows (ignored by SQLite).
        query = select(table.id).where(where).order_by(table.created_at).limit(4)
        return list(session.scalars(query.with_for_update(skip_locked=True)).all())

    def claim_in(self, session: Session, holder: str) -> Job | None:
        """The oldest job nobody holds (or whose holder's lease ran out) of a dataset with none
        being worked on, else the oldest of all, now ours, as ``claimed`` reads it."""
        table, expiry, now = self.table, self.expiry(), utcnow()
        claimable = self._claimable(now)
        busy = self._busy_datasets(session, now)
        # A job tried in the first pass is no longer claimable in the second: it is not taken twice.
        passes = [claimable & table.dataset_id.not_in(busy), claimable] if busy else [claimable]
        for where in passes:
            for job_id in self._candidates(session, where):
                taken = session.execute(
                    update(table)
                    .where(table.id == job_id, claimable)
                    .values(holder=holder, lease_until=expiry, attempts=table.attempts + 1)
                    .returning(table.id)
                ).first()
                row = session.get(table, job_id, populate_existing=True) if taken is not None else None
                claimed = self.claimed(session, row) if row is not None else None
                if claimed is not None:
                    return claimed
        return None

    def look(self, session: Session, job_id: str, holder: str) -> tuple[str, Row | None]:
        """Whether the job is still ours and not cancelled (``Control``), with its row locked."""
        row = session.get(self.table, job_id, with_for_update=True)
        if row is None:
            return Control.DELETED, None
        if row.holder != holder or row.state not in self.active:
            return Control.LOST, None
        return (Control.CANCELLED if row.cancel_requested else Control.GO), row

    def held(self, session: Session, job_id: str, holder: str) -> Row | None:
        """The job's row, locked, while it is still ours (cancelled or not)."""
        control, row = self.look(session, job_id, holder)
        return row if control in (Control.GO, Control.CANCELLED) else None
