"""Votes on answers: one row per record and voter, changed in place, deleted when withdrawn.

A voter is the caller as the votes table names it: ``operator``, ``key:<api key id>``,
``visitor:<visitor id>`` or ``user:<user id>``, so each API key, each share-link visitor and
each user has one vote per answer
and a changed mind replaces the earlier one. The write is one upsert on the table's unique
(record, voter) pair, the statement ``kbcore.db.lease`` uses for leases, so two votes sent at
once by the same caller leave one row, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import ChatRecord, RecordStatus, RecordVote, utcnow
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.vocabulary import VOTE
from kbcore.words.said import said
from services.chat.callers.chat_caller import Caller, CallerKind

MAX_REASON_CHARS = 500
STILL_RUNNING = said("answer_still_being_written_vote_once")
UP = VOTE.name(pb.VOTE_UP)
DOWN = VOTE.name(pb.VOTE_DOWN)


@dataclass(frozen=True)
class CastVote:
    """What a caller asks for: a vote's wire name ("" withdraws) and its reason."""

    vote: str
    reason: str


def voter_of(caller: Caller) -> str:
    if caller.kind is CallerKind.OPERATOR:
        return "operator"
    if caller.kind is CallerKind.APPLICATION:
        return f"key:{caller.key_id}"
    if caller.kind is CallerKind.USER:
        return f"user:{caller.user_id}"
    return f"visitor:{caller.visitor_id}"


def requested_vote(vote: int, reason: str) -> CastVote:
    """The request's vote, checked; a withdrawal keeps no reason."""
    if vote and not VOTE.name(vote):
        raise InvalidRequest(said("unknown_vote_use_vote_up_vote", vote=vote))
    text = reason.strip()
    if len(text) > MAX_REASON_CHARS:
        raise InvalidRequest(
            said("reason_characters_long_most_are_allowed", len_text=len(text), max_reason_chars=MAX_REASON_CHARS)
        )
    name = VOTE.name(vote)
    return CastVote(name, text if name else "")


class VoteBook:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def cast(self, chat_id: str, record_id: int, voter: str, wanted: CastVote) -> None:
        """Record (or withdraw) ``voter``'s vote on a finished record of ``chat_id``."""
        await run_write(self._sessions, lambda session: _cast(session, chat_id, record_id, voter, wanted))

    async def own(self, voter: str, record_ids: list[int]) -> dict[int, CastVote]:
        """``voter``'s votes on these records, by record id (records without one are absent)."""
        if not record_ids:
            return {}
        query = select(RecordVote.record_id, RecordVote.vote, RecordVote.reason).where(
            RecordVote.voter == voter, RecordVote.record_id.in_(record_ids)
        )
        rows = await run_read(self._sessions, lambda session: session.execute(query).all())
        return {row.record_id: CastVote(row.vote, row.reason) for row in rows}


def _cast(session: Session, chat_id: str, record_id: int, voter: str, wanted: CastVote) -> None:
    status = session.scalar(select(ChatRecord.status).where(ChatRecord.id == record_id, ChatRecord.chat_id == chat_id))
    if status is None:
        raise NotFound(said("record_does_not_exist_chat", record_id=record_id, chat_id=chat_id))
    if status == RecordStatus.RUNNING:
        raise Conflict(STILL_RUNNING)
    if not wanted.vote:
        session.execute(delete(RecordVote).where(RecordVote.record_id == record_id, RecordVote.voter == voter))
        return
    now = utcnow()
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    insert = dialect.insert(RecordVote).values(
        record_id=record_id, voter=voter, vote=wanted.vote, reason=wanted.reason, created_at=now, updated_at=now
    )
    session.execute(
        insert.on_conflict_do_update(
            index_elements=[RecordVote.record_id, RecordVote.voter],
            set_={"vote": insert.excluded.vote, "reason": insert.excluded.reason, "updated_at": now},
        )
    )
