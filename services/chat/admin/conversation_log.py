"""The conversation log: every record of an application (or of all of them) across chats and
callers, filtered by the operator, newest first.

The filters read columns copied out of a record's details when it is saved (``details.log_columns``)
and, for votes, the ``chat_record_vote`` table, so one portable query serves SQLite and PostgreSQL.
Every filter is checked before the query runs: a reversed or absurd date range, an unknown enum
value or an oversized search string is the caller's mistake and says so, never a 500 or a silently
empty page.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Select, Subquery, and_, case, false, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.engine import run_read
from kbcore.db.tables import Chat, ChatRecord, RecordSource, RecordVote
from kbcore.errors import InvalidRequest
from kbcore.vocabulary import LOG_SOURCE, RECORD_STATUS, STOP_REASON, VOTE, EnumNames
from kbcore.words.said import said
from services.chat.admin.days import parse_day
from services.chat.admin.votes import DOWN, UP
from services.chat.callers.chat_caller import Caller, CallerKind
from services.chat.chat_messages import record_message

MAX_TEXT_CHARS = 200  # a search string longer than this is refused, not cut silently
# The export is the filtered log without pages, bounded twice: in rows, and in bytes so that the
# answer stays well inside one gRPC message (64 MiB). ``total`` says how many matched.
MAX_EXPORT_ROWS = 50_000
MAX_EXPORT_BYTES = 48 * 1024 * 1024
_VOTES_CHUNK = 500  # record ids per IN list (SQLite's parameter limit is far above)


def record_origin(caller: Caller, source: str) -> dict[str, str]:
    """Where a new record's question came from (``log_source``) and who asked (``caller_ref``:
    the API key's, the visitor's or the user's id; empty for the operator). The OpenAI-compatible
    endpoint is named as such whoever calls it."""
    if source == RecordSource.OPENAI_API:
        kind = pb.LOG_SOURCE_OPENAI_API
    elif caller.kind is CallerKind.VISITOR:
        kind = pb.LOG_SOURCE_SHARE_LINK
    elif caller.kind is CallerKind.APPLICATION:
        kind = pb.LOG_SOURCE_API_KEY
    else:
        kind = pb.LOG_SOURCE_PAGE
    reference = {
        CallerKind.APPLICATION: caller.key_id,
        CallerKind.VISITOR: caller.visitor_id,
        CallerKind.USER: caller.user_id,
    }.get(caller.kind, "")
    return {"log_source": LOG_SOURCE.name(kind), "caller_ref": reference}


@dataclass(frozen=True)
class LogQuery:
    """A checked ``LogFilter``: what the SQL filters on. An empty tuple filters nothing; a ""
    inside ``stop_reasons`` or ``sources`` means "none recorded", a None in ``votes`` "not voted"."""

    application_id: str = ""
    among: frozenset[str] | None = None  # only these applications (a user's granted ones); None = all
    since: dt.datetime | None = None
    before: dt.datetime | None = None
    statuses: tuple[str, ...] = ()
    stop_reasons: tuple[str, ...] = ()
    sufficient: bool | None = None
    votes: tuple[str | None, ...] = ()
    sources: tuple[str, ...] = ()
    text: str = ""


def log_query(message: pb.LogFilter) -> LogQuery:
    """The filter, checked; InvalidRequest with a sentence for anything wrong (a search string
    over the limit too: it is a filter the caller wrote, not a payload, so 400 rather than 413)."""
    first = _day(message.date_from, "date_from")
    last = _day(message.date_to, "date_to")
    if first and last and first > last:
        raise InvalidRequest(
            said(
                "date_range_reversed_date_after_date",
                first_isoformat=first.isoformat(),
                last_isoformat=last.isoformat(),
            )
        )
    text = message.text.strip()
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidRequest(said("search_text_most_characters_got", max_text_chars=MAX_TEXT_CHARS, len_text=len(text)))
    return LogQuery(
        application_id=message.application_id.strip(),
        since=dt.datetime.combine(first, dt.time()) if first else None,
        before=dt.datetime.combine(last + dt.timedelta(days=1), dt.time()) if last else None,
        statuses=_names(message.statuses, RECORD_STATUS, "statuses", allow_unspecified=False),
        stop_reasons=_names(message.stop_reasons, STOP_REASON, "stop_reasons", allow_unspecified=True),
        sufficient=message.sufficient if message.HasField("sufficient") else None,
        votes=tuple(VOTE.name(v) or None for v in _names_checked(message.votes, VOTE, "votes")),
        sources=_names(message.sources, LOG_SOURCE, "sources", allow_unspecified=True),
        text=text,
    )


def _day(raw: str, field: str) -> dt.date | None:
    return parse_day(field, raw) if raw.strip() else None


def _names_checked(values: Iterable[int], names: EnumNames[Any], field: str) -> list[int]:
    checked = list(dict.fromkeys(values))
    unknown = [v for v in checked if v and not names.name(v)]
    if unknown:
        raise InvalidRequest(said("unknown_value_s", field=field, join_map_str_unknown=", ".join(map(str, unknown))))
    return checked


def _names(values: Iterable[int], names: EnumNames[Any], field: str, allow_unspecified: bool) -> tuple[str, ...]:
    checked = _names_checked(values, names, field)
    if not allow_unspecified and 0 in checked:
        raise InvalidRequest(said("cannot_hold_unspecified_value_0", field=field))
    return tuple(names.name(v) for v in checked)


def _like_literal(text: str) -> str:
    """``text`` as a LIKE pattern that matches it literally anywhere (``\\`` is the escape)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _vote_tally() -> Subquery:
    """Per voted record: how many up and down votes it has."""
    up = func.sum(case((RecordVote.vote == UP, 1), else_=0))
    down = func.sum(case((RecordVote.vote == DOWN, 1), else_=0))
    return select(RecordVote.record_id, up.label("up"), down.label("down")).group_by(RecordVote.record_id).subquery()


def _vote_condition(tally: Subquery, votes: Sequence[str | None]) -> ColumnElement[bool]:
    """A record has a vote of a kind when any caller voted so; "not voted" when nobody did."""
    wanted: list[ColumnElement[bool]] = []
    for vote in votes:
        if vote is None:
            wanted.append(tally.c.record_id.is_(None))
        else:
            wanted.append(func.coalesce(tally.c.up if vote == UP else tally.c.down, 0) > 0)
    return or_(false(), *wanted)


def _filtered(query: LogQuery, tally: Subquery) -> Select[Any]:
    conditions: list[ColumnElement[bool]] = []
    if query.application_id:
        conditions.append(Chat.application_id == query.application_id)
    if query.among is not None:
        conditions.append(Chat.application_id.in_(sorted(query.among)))
    if query.since is not None:
        conditions.append(ChatRecord.created_at >= query.since)
    if query.before is not None:
        conditions.append(ChatRecord.created_at < query.before)
    if query.statuses:
        conditions.append(ChatRecord.status.in_(query.statuses))
    if query.stop_reasons:
        conditions.append(ChatRecord.stop_reason.in_(query.stop_reasons))
    if query.sufficient is not None:
        conditions.append(ChatRecord.sufficient.is_(query.sufficient))
    if query.votes:
        conditions.append(_vote_condition(tally, query.votes))
    if query.sources:
        conditions.append(ChatRecord.log_source.in_(query.sources))
    if query.text:
        pattern = _like_literal(query.text)
        conditions.append(
            or_(ChatRecord.question.ilike(pattern, escape="\\"), ChatRecord.answer.ilike(pattern, escape="\\"))
        )
    joined = (
        select(ChatRecord, Chat.application_id, tally.c.up, tally.c.down)
        .join(Chat, Chat.id == ChatRecord.chat_id)
        .outerjoin(tally, tally.c.record_id == ChatRecord.id)
    )
    return joined.where(and_(*conditions)) if conditions else joined


@dataclass(frozen=True)
class _Row:
    record: ChatRecord
    application_id: str
    up: int
    down: int


class ChatLog:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def page(self, query: LogQuery, page: int, page_size: int) -> pb.ListLogResponse:
        def work(session: Session) -> pb.ListLogResponse:
            filtered = _filtered(query, _vote_tally())
            total = session.scalar(select(func.count()).select_from(filtered.subquery()))
            ordered = filtered.order_by(ChatRecord.created_at.desc(), ChatRecord.id.desc())
            rows = session.execute(ordered.offset((page - 1) * page_size).limit(page_size)).all()
            entries = _entries(session, [_Row(r[0], r[1], int(r[2] or 0), int(r[3] or 0)) for r in rows], full=True)
            return pb.ListLogResponse(entries=entries, total=int(total or 0))

        return await run_read(self._sessions, work)

    async def export(self, query: LogQuery) -> pb.ListLogResponse:
        """The filtered log without pages, newest first, at most ``MAX_EXPORT_ROWS`` entries and
        ``MAX_EXPORT_BYTES``; ``total`` counts every match, so a cut export shows as one. The
        entries carry what an export row needs, not the evidence paragraphs."""

        def work(session: Session) -> pb.ListLogResponse:
            filtered = _filtered(query, _vote_tally())
            total = session.scalar(select(func.count()).select_from(filtered.subquery()))
            ordered = filtered.order_by(ChatRecord.created_at.desc(), ChatRecord.id.desc()).limit(MAX_EXPORT_ROWS)
            rows = [_Row(r[0], r[1], int(r[2] or 0), int(r[3] or 0)) for r in session.execute(ordered)]
            response = pb.ListLogResponse(total=int(total or 0))
            size = 0
            for entry in _entries(session, rows, full=False):
                size += entry.ByteSize() + 8
                if size > MAX_EXPORT_BYTES:
                    break
                response.entries.append(entry)
            return response

        return await run_read(self._sessions, work)


def _latest_votes(session: Session, record_ids: list[int]) -> dict[int, tuple[str, str]]:
    """Each record's most recent vote and its reason."""
    latest: dict[int, tuple[str, str]] = {}
    for start in range(0, len(record_ids), _VOTES_CHUNK):
        chunk = record_ids[start : start + _VOTES_CHUNK]
        rows = session.execute(
            select(RecordVote.record_id, RecordVote.vote, RecordVote.reason)
            .where(RecordVote.record_id.in_(chunk))
            .order_by(RecordVote.updated_at, RecordVote.id)
        )
        for record_id, vote, reason in rows:
            latest[record_id] = (vote, reason)
    return latest


def _entries(session: Session, rows: list[_Row], full: bool) -> list[pb.LogEntry]:
    voted = [row.record.id for row in rows if row.up or row.down]
    latest = _latest_votes(session, voted)
    return [_entry(row, latest.get(row.record.id, ("", "")), full) for row in rows]


def _entry(row: _Row, vote: tuple[str, str], full: bool) -> pb.LogEntry:
    record = row.record
    message = record_message(record, operator_view=True)
    if not full:  # an export row reads the trace's outline, not the evidence itself
        message.details.retrieval.ClearField("paragraphs")
        message.details.retrieval.ClearField("part_support")
    return pb.LogEntry(
        record=message,
        application_id=row.application_id,
        source=LOG_SOURCE.value(record.log_source, default=pb.LOG_SOURCE_UNSPECIFIED),
        stop_reason=STOP_REASON.value(record.stop_reason, default=common_pb2.STOP_REASON_UNSPECIFIED),
        sufficient=bool(record.sufficient),
        rounds=record.rounds,
        vote=VOTE.value(vote[0], default=pb.VOTE_UNSPECIFIED),
        vote_reason=vote[1],
        votes_up=row.up,
        votes_down=row.down,
        improved_paragraph_ids=list(record.improved_paragraph_ids or []),
    )
