"""Usage figures of one application per UTC day: questions, outcomes, tokens, answer times,
rounds, stop reasons, insufficient evidence and votes.

Percentiles are not portable SQL (SQLite has none), so the records are streamed in order of
their creation and each day is summed up as soon as the next one begins: memory holds one
day's answer times, never the range's. A day without records is still a day of the answer,
with zeros, so a chart's x axis has no holes.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from sqlalchemy import Row, Select, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.tables import Chat, ChatRecord, RecordStatus, RecordVote
from kbcore.vocabulary import STOP_REASON
from services.chat.admin.days import DayRange
from services.chat.admin.votes import DOWN, UP

STREAM_BATCH = 1000
AnySelect: TypeAlias = Select[*tuple[Any, ...]]
OUTCOMES = {
    RecordStatus.ANSWERED: "answered",
    RecordStatus.FAILED: "failed",
    RecordStatus.STOPPED: "stopped",
    RecordStatus.INTERRUPTED: "interrupted",
}


def percentile(ordered: list[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default and PostgreSQL's
    ``percentile_cont``), over values already sorted; 0 for none."""
    if not ordered:
        return 0.0
    position = fraction * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


@dataclass
class DayTally:
    """One day's records as they stream past, then its ``UsageDay``."""

    questions: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    tokens_in: int = 0
    tokens_out: int = 0
    answer_times: list[float] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)
    stop_reasons: Counter[str] = field(default_factory=Counter)
    insufficient: int = 0

    def add(self, record: Row[Any]) -> None:
        self.questions += 1
        self.outcomes[record.status] += 1
        self.tokens_in += record.message_tokens or 0
        self.tokens_out += record.answer_tokens or 0
        # Answer time is the time to a finished answer: a stop or a failure says nothing of it.
        if record.status == RecordStatus.ANSWERED:
            self.answer_times.append(float(record.run_time or 0.0))
        # Rounds are averaged over the questions that searched at all (no datasets: no rounds).
        if record.rounds:
            self.rounds.append(record.rounds)
        if record.stop_reason:
            self.stop_reasons[record.stop_reason] += 1
        if record.sufficient is False:
            self.insufficient += 1

    def message(self, day: dt.date, votes: Counter[str]) -> pb.UsageDay:
        times = sorted(self.answer_times)
        return pb.UsageDay(
            date=day.isoformat(),
            questions=self.questions,
            **{name: self.outcomes[status] for status, name in OUTCOMES.items()},
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            p50_seconds=percentile(times, 0.5),
            p95_seconds=percentile(times, 0.95),
            mean_rounds=sum(self.rounds) / len(self.rounds) if self.rounds else 0.0,
            insufficient=self.insufficient,
            votes_up=votes[UP],
            votes_down=votes[DOWN],
            stop_reasons=_tallies(self.stop_reasons),
        )


def _tallies(counts: Counter[str]) -> list[pb.StopReasonTally]:
    """In the enum's order; a name this build does not know is left out rather than mislabelled."""
    known = [
        (STOP_REASON.value(name, default=common_pb2.STOP_REASON_UNSPECIFIED), count) for name, count in counts.items()
    ]
    return [pb.StopReasonTally(stop_reason=value, count=count) for value, count in sorted(known) if value]


class UsageReport:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def days(self, application_id: str, days: DayRange) -> list[pb.UsageDay]:
        """Every day of ``days``, in order; at most one day's answer times in memory."""
        votes = await self._votes(application_id, days)
        summed: dict[dt.date, pb.UsageDay] = {}
        day: dt.date | None = None
        tally = DayTally()
        query = select(*TALLIED).order_by(ChatRecord.created_at)
        async for row in self._stream(_in_range(query, application_id, days)):
            if row.created_at.date() != day:
                if day is not None:
                    summed[day] = tally.message(day, votes[day])
                day, tally = row.created_at.date(), DayTally()
            tally.add(row)
        if day is not None:
            summed[day] = tally.message(day, votes[day])
        return [summed.get(d) or DayTally().message(d, votes[d]) for d in days.days()]

    async def _votes(self, application_id: str, days: DayRange) -> dict[dt.date, Counter[str]]:
        """Votes by the day of the record they are on: a day's answers, as they were judged."""
        query = select(ChatRecord.created_at, RecordVote.vote).join(RecordVote, RecordVote.record_id == ChatRecord.id)
        tallies: dict[dt.date, Counter[str]] = {day: Counter() for day in days.days()}
        async for row in self._stream(_in_range(query, application_id, days)):
            tallies[row.created_at.date()][row.vote] += 1
        return tallies

    async def _stream(self, query: AnySelect) -> AsyncIterator[Row[Any]]:
        async with self._sessions() as session:
            result = await session.stream(query.execution_options(yield_per=STREAM_BATCH))
            async for row in result:
                yield row


# The columns a day's figures need: never the answers and details, which are most of a row.
TALLIED = (
    ChatRecord.created_at,
    ChatRecord.status,
    ChatRecord.message_tokens,
    ChatRecord.answer_tokens,
    ChatRecord.run_time,
    ChatRecord.rounds,
    ChatRecord.stop_reason,
    ChatRecord.sufficient,
)


def _in_range(query: AnySelect, application_id: str, days: DayRange) -> AnySelect:
    return (
        query.join(Chat, Chat.id == ChatRecord.chat_id)
        .where(Chat.application_id == application_id)
        .where(ChatRecord.created_at >= days.start, ChatRecord.created_at < days.end)
    )
