"""The deployment's budget for uploads in flight: bytes being received, checked and stored.

Every upload holds, from the moment its request starts until it ends (stored, refused, cut off,
failed), the bytes it may bring: a row in ``upload_reservation``, so the budget is one for every
replica. Past ``KB_UPLOAD_BUDGET_MB`` in all, or ``KB_UPLOAD_CALLER_MB`` for one caller, the next
upload is refused at once (``Busy``: HTTP 503 with ``Retry-After``) rather than queued, so one
uploader's burst neither holds the others' connections nor takes their turn for long. One upload
always fits when its caller holds nothing: a reservation is at most the smaller share.

The row is deleted when the request ends; a process that died mid-request leaves its rows, which
stop counting at their expiry (the request's own deadline) and are swept by the next reservation.
Reserving is a check and an insert in one write transaction: SQLite's writers take turns already,
and on PostgreSQL a transaction-scoped advisory lock makes concurrent reservers take turns too.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import UploadReservation, utcnow
from kbcore.errors import Busy
from kbcore.process.disk_space import MiB
from kbcore.words.said import said

log = logging.getLogger(__name__)

RETRY_SECONDS = 5  # what a refused uploader is told to wait: a 50 MiB upload is stored in seconds
_LOCK_KEY = 0x6B62_7570  # the advisory lock reservers take turns on (PostgreSQL): "kbup"
UPLOADS_FULL = said("server_receiving_many_uploads_can_once")
CALLER_UPLOADS_FULL = said("your_uploads_still_progress_hold_much")


@dataclass(frozen=True)
class Shares:
    total: int  # bytes every upload in flight may hold together
    per_caller: int  # bytes one caller's uploads may hold together

    @classmethod
    def of_mib(cls, total_mb: int, per_caller_mb: int) -> Shares:
        return cls(total_mb * MiB, min(per_caller_mb, total_mb) * MiB)


class UploadBudget:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], shares: Shares) -> None:
        self._sessions = sessions
        self.shares = shares

    @contextlib.asynccontextmanager
    async def held(self, caller: str, size: int, seconds: float) -> AsyncIterator[int]:
        """Hold ``size`` bytes (at most a caller's share) for ``caller`` while the block runs, at
        most ``seconds``; yields what is held. Refused with ``Busy`` when the budget cannot."""
        held = max(1, min(size, self.shares.per_caller))
        expires = utcnow() + dt.timedelta(seconds=seconds)
        reservation = await run_write(self._sessions, lambda s: _reserve(s, self.shares, caller[:80], held, expires))
        try:
            yield held
        finally:
            # Released whatever ended the block, a cancelled call included: the release itself is
            # shielded, so a second cancel cannot leave the row behind (its expiry would, later).
            release = asyncio.ensure_future(run_write(self._sessions, lambda s: _release(s, reservation)))
            try:
                await asyncio.shield(release)
            except asyncio.CancelledError:
                await asyncio.wait([release])
                raise
            except Exception:
                log.exception("an upload's share of the budget was not released; it expires at %s", expires)

    async def in_flight(self) -> int:
        """Bytes held now (expired rows left out), for tests and the bench."""
        return await run_read(self._sessions, lambda s: _held(s, utcnow()))


def _held(session: Session, now: dt.datetime, caller: str | None = None) -> int:
    query = select(func.coalesce(func.sum(UploadReservation.size), 0)).where(UploadReservation.expires_at > now)
    if caller is not None:
        query = query.where(UploadReservation.caller == caller)
    return int(session.scalar(query) or 0)


def _reserve(session: Session, shares: Shares, caller: str, size: int, expires: dt.datetime) -> str:
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
    now = utcnow()
    session.execute(delete(UploadReservation).where(UploadReservation.expires_at <= now))
    # A caller's own uploads are named when they fill its share (a share as large as the budget
    # is no share: the budget is then full for everyone alike).
    if shares.per_caller < shares.total and _held(session, now, caller) + size > shares.per_caller:
        raise Busy(CALLER_UPLOADS_FULL, retry_after=RETRY_SECONDS)
    if _held(session, now) + size > shares.total:
        raise Busy(UPLOADS_FULL, retry_after=RETRY_SECONDS)
    row = UploadReservation(caller=caller, size=size, expires_at=expires)
    session.add(row)
    session.flush()
    return row.id


def _release(session: Session, reservation: str) -> None:
    session.execute(delete(UploadReservation).where(UploadReservation.id == reservation))
