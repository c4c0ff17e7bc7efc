"""The audit trail as administrators read it (``OperationsService.ListAudit``): newest first,
page by page, filtered by who acted, the kind of action, the object, and a time range.

The rows are written by every change in the transaction of that change
(``kbcore.db.audit.record_action``); docs/access.md lists what is recorded. ``since`` is
inclusive and ``until`` exclusive, so consecutive ranges never show a row twice.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.db.tables import AuditEvent
from kbcore.errors import InvalidRequest
from kbcore.words.said import said
from services.chat.accounts.user_messages import timestamp

MAX_AUDIT_PAGE = 500
DEFAULT_AUDIT_PAGE = 50
MAX_TIME_TEXT = 64


def parse_bound(field: str, raw: str) -> dt.datetime | None:
    """An RFC 3339 time with a zone as naive UTC (how rows are stored); None for ""."""
    text = raw.strip()
    if not text:
        return None
    shown = text[:MAX_TIME_TEXT]
    try:
        when = dt.datetime.fromisoformat(text) if len(text) <= MAX_TIME_TEXT else None
    except ValueError:
        when = None
    if when is None:
        raise InvalidRequest(said("must_be_rfc_3339_time_such", field=field, shown=f"{shown!r}"))
    if when.tzinfo is None:
        raise InvalidRequest(said("needs_time_zone_z_offset_such", field=field, shown=f"{shown!r}"))
    return when.astimezone(dt.UTC).replace(tzinfo=None)


def audit_page(page: int, page_size: int) -> tuple[int, int]:
    """The page (1-based; 0 is the first) and its size (0: 50), refused in words out of range."""
    if page < 0:
        raise InvalidRequest(said("page_must_be_1_more_got", page=page))
    if not 0 <= page_size <= MAX_AUDIT_PAGE:
        raise InvalidRequest(
            said(
                "page_size_must_be_between_1_2",
                max_audit_page=MAX_AUDIT_PAGE,
                default_audit_page=DEFAULT_AUDIT_PAGE,
                page_size=page_size,
            )
        )
    return page or 1, page_size or DEFAULT_AUDIT_PAGE


@dataclass(frozen=True)
class AuditQuery:
    actor: str = ""  # a username (or "operator") or an actor id
    action: str = ""  # a prefix: "user." or "application.create"
    object_id: str = ""
    since: dt.datetime | None = None
    until: dt.datetime | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        found: list[ColumnElement[bool]] = []
        if self.actor:
            found.append(or_(AuditEvent.actor_name == self.actor, AuditEvent.actor_id == self.actor))
        if self.action:
            found.append(AuditEvent.action.startswith(self.action, autoescape=True))
        if self.object_id:
            found.append(AuditEvent.object_id == self.object_id)
        if self.since is not None:
            found.append(AuditEvent.at >= self.since)
        if self.until is not None:
            found.append(AuditEvent.at < self.until)
        return found


def audit_query(request: pb.ListAuditRequest) -> AuditQuery:
    """The filter a request asks, checked: times readable, the range not empty by mistake."""
    query = AuditQuery(
        actor=request.actor.strip(),
        action=request.action.strip(),
        object_id=request.object_id.strip(),
        since=parse_bound("since", request.since),
        until=parse_bound("until", request.until),
    )
    if query.since is not None and query.until is not None and query.since >= query.until:
        raise InvalidRequest(said("since_must_be_earlier_until"))
    return query


def event_message(row: AuditEvent) -> pb.AuditEvent:
    return pb.AuditEvent(
        id=row.id,
        at=timestamp(row.at),
        actor_kind=row.actor_kind,
        actor_id=row.actor_id,
        actor_name=row.actor_name,
        client_address=row.client_address,
        action=row.action,
        object_kind=row.object_kind,
        object_id=row.object_id,
        object_name=row.object_name,
        detail=row.detail,
    )


class AuditTrail:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def page(self, query: AuditQuery, page: int, page_size: int) -> pb.ListAuditResponse:
        """One page of the rows ``query`` matches, newest first, and how many match in all."""
        conditions = query.conditions()
        async with self._sessions() as session:
            total = await session.scalar(select(func.count()).select_from(AuditEvent).where(*conditions))
            rows = await session.scalars(
                select(AuditEvent)
                .where(*conditions)
                .order_by(AuditEvent.at.desc(), AuditEvent.id.desc())
                .offset((page - 1) * page_size)
                .limit(page_size)
            )
            events = [event_message(row) for row in rows]
        return pb.ListAuditResponse(events=events, total=int(total or 0))
