"""A table of leased jobs, once: claiming a row, checking that it is still ours, renewing and
releasing its lease. The ingestion queue (``ingest_job``) and the change of a dataset's
embedding model (``embedding_job``) are two such tables; each keeps its own rows and what its
job writes besides.

A job is claimed with a lease (holder + expiry, renewed with every progress report), exactly as
the chat lease works: a process that dies stops renewing, and after ``lease_seconds`` any
replica takes the job over and resumes it. Claiming is one conditional UPDATE (compare and
set), preceded on PostgreSQL by ``FOR UPDATE SKIP LOCKED`` so that replicas polling at the same
moment pick different rows instead of queueing on one; on SQLite, where writes are serialised,
the conditional UPDATE alone decides. Every later write of the worker is conditional on still
holding the lease, so a job taken over from a slow process is never finished twice. Only
processes of the same vector store (``store_key``) claim a job: it writes into that store.

Which job is claimed: the oldest of a dataset that has no job being worked on (by any process),
else the oldest of all. One dataset's 500 queued uploads then take one slot at a time while
another dataset's upload, queued after them, goes to the next slot that comes free: datasets take
turns instead of waiting behind each other. A preference, not a lock: replicas claiming at the
same moment may both start jobs of one dataset, and each job is still processed by exactly one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Generic, TypeVar

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import EmbeddingJob, IngestJob, utcnow

MAX_ATTEMPTS = 3  # a job that killed its process this many times is failed, not retried forever

Row = TypeVar("Row", IngestJob, EmbeddingJob)
Claimed = TypeVar("Claimed")


class Control:
    """What a progress report learned: go on, stop because of a cancel, or stop because the lease
    was lost (another process took the job over, or the document was deleted)."""

    GO = "go"
    CANCELLED = "cancelled"
    LOST = "lost"
    DELETED = "deleted"


class Leases(Generic[Row]):
    """The leases of one job table: ``active`` are the states of a job not finished yet."""

    def __init__(self, table: type[Row], active: tuple[str, ...], lease_seconds: float, store_key: str) -> None:
        self._table: type[Row] = table
        self._active = active
        self.lease_seconds = lease_seconds
        self.store_key = store_key

    def expiry(self) -> dt.datetime:
        return utcnow() + dt.timedelta(seconds=self.lease_seconds)

    def _claimable(self, now: dt.datetime) -> ColumnElement[bool]:
        """A job not finished, for this store, that nobody holds or whose holder's lease ran out."""
        table = self._table
        return (
            table.state.in_(self._active)
            & (table.store_key == self.store_key)
            & (table.holder.is_(None) | (table.lease_until < now))
        )

    def waiting(self, session: Session) -> bool:
        """Whether a job could be claimed now (a read)."""
        return session.scalar(select(self._table.id).where(self._claimable(utcnow())).limit(1)) is not None

    def _busy_datasets(self, session: Session, now: dt.datetime) -> set[str]:
        """The datasets with a job someone works on now (held, its lease running), whatever its store."""
        table = self._table
        held = table.state.in_(self._active) & table.holder.is_not(None) & (table.lease_until >= now)
        return set(session.scalars(select(table.dataset_id).where(held).distinct()).all())

    def _candidates(self, session: Session, where: ColumnElement[bool]) -> list[str]:
        """The ids of the oldest few jobs ``where`` allows, locked for us on PostgreSQL."""
        table = self._table
        # SKIP LOCKED: concurrent claimers on PostgreSQL take different rows (ignored by SQLite).
        query = select(table.id).where(where).order_by(table.created_at).limit(4)
        return list(session.scalars(query.with_for_update(skip_locked=True)).all())

    def claim(self, session: Session, holder: str, read: Callable[[Row], Claimed | None]) -> Claimed | None:
        """The oldest job nobody holds (or whose holder's lease ran out) of a dataset with none
        being worked on, else the oldest of all, now ours, as ``read`` sees it (None: skip it,
        e.g. its document is gone)."""
        table, expiry, now = self._table, self.expiry(), utcnow()
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
                claimed = read(row) if row is not None else None
                if claimed is not None:
                    return claimed
        return None

    def look(self, session: Session, job_id: str, holder: str) -> tuple[str, Row | None]:
        """Whether the job is still ours and not cancelled (``Control``), with its row locked."""
        row = session.get(self._table, job_id, with_for_update=True)
        if row is None:
            return Control.DELETED, None
        if row.holder != holder or row.state not in self._active:
            return Control.LOST, None
        return (Control.CANCELLED if row.cancel_requested else Control.GO), row

    def renew(self, session: Session, job_id: str, holder: str, state: str, done: int, total: int) -> str:
        """Record progress and renew the lease, when the job is still ours to go on with."""
        control, row = self.look(session, job_id, holder)
        if control == Control.GO and row is not None:
            row.state, row.done, row.total, row.lease_until = state, done, total, self.expiry()
        return control

    def held(self, session: Session, job_id: str, holder: str) -> Row | None:
        """The job's row, locked, while it is still ours (cancelled or not)."""
        control, row = self.look(session, job_id, holder)
        return row if control in (Control.GO, Control.CANCELLED) else None


async def claim_if_waiting(
    sessions: async_sessionmaker[AsyncSession], leases: Leases[Row], claim: Callable[[Session], Claimed | None]
) -> Claimed | None:
    """``claim`` in a write transaction, but only when a read finds a job waiting. Workers poll
    every second and nearly every poll finds nothing: as a read it takes no write lock, which on
    SQLite every process's writers share (the chat service's included, mid-question)."""
    if not await run_read(sessions, leases.waiting):
        return None
    return await run_write(sessions, claim)


def release(row: IngestJob | EmbeddingJob, state: str, error: str) -> None:
    """The job ends: its state and reason, and nobody holds it any more."""
    row.state, row.error, row.holder, row.lease_until = state, error, None, None
