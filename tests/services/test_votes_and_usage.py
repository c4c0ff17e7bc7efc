"""Votes on answers (one per caller per record, changeable, withdrawable, only on records the
caller can see) and the per-day usage figures, over the real chat service with rows written
straight into its database so every number is known in advance."""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.tables import Application, ChatRecord, RecordStatus, RecordVote
from kbcore.rpc.caller_token import bearer
from services.chat.access.rules import NOT_VISIBLE
from services.chat.admin.votes import STILL_RUNNING
from tests.grpc_status import status_of

Sessions = async_sessionmaker[AsyncSession]
Metadata = tuple[tuple[str, str], ...]


@dataclass
class Place:
    """An application with a share link, two visitors and an API key, and a chat of the first visitor."""

    application_id: str
    alice: Metadata
    bob: Metadata
    key: Metadata
    key_id: str
    chat_id: str


async def new_application(sessions: Sessions, name: str) -> str:
    async with sessions.begin() as session:
        application = Application(name=name)
        session.add(application)
    return application.id


async def add_record(sessions: Sessions, chat_id: str, **values: object) -> int:
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=chat_id, question=str(values.pop("question", "年假有几天？")), **values)
        session.add(record)
    return record.id


async def new_place(chat, operator, sessions: Sessions, name: str) -> Place:
    application_id = await new_application(sessions, name)
    link = await chat.access.CreateAccessToken(
        pb.CreateAccessTokenRequest(application_id=application_id), metadata=operator
    )
    sign_in = pb.AuthenticateVisitorRequest(access_token=link.access_token)
    alice = bearer((await chat.access.AuthenticateVisitor(sign_in)).token)
    bob = bearer((await chat.access.AuthenticateVisitor(sign_in)).token)
    key = await chat.access.CreateApiKey(pb.CreateApiKeyRequest(application_id=application_id), metadata=operator)
    opened = await chat.applications.OpenChat(pb.OpenChatRequest(application_id=application_id), metadata=alice)
    return Place(application_id, alice, bob, bearer(key.key), key.id, opened.chat_id)


async def votes_on(sessions: Sessions, record_id: int) -> dict[str, tuple[str, str]]:
    async with sessions() as session:
        rows = await session.execute(select(RecordVote).where(RecordVote.record_id == record_id))
        return {v.voter: (v.vote, v.reason) for (v,) in rows.all()}


def vote(chat_id: str, record_id: int, value: Any, reason: str = "") -> pb.VoteRecordRequest:
    return pb.VoteRecordRequest(chat_id=chat_id, record_id=str(record_id), vote=value, reason=reason)


async def test_each_caller_has_one_vote_per_record_that_it_can_change_and_withdraw(
    chat, operator, sessions: Sessions, unique: str
) -> None:
    place = await new_place(chat, operator, sessions, f"votes-{unique}")
    record_id = await add_record(sessions, place.chat_id, status=RecordStatus.ANSWERED, answer="15 天")

    reply = await chat.operations.VoteRecord(vote(place.chat_id, record_id, pb.VOTE_UP), metadata=place.alice)
    assert (reply.vote, reply.reason) == (pb.VOTE_UP, "")
    reply = await chat.operations.VoteRecord(
        vote(place.chat_id, record_id, pb.VOTE_DOWN, "  没有提到试用期  "), metadata=place.alice
    )
    assert (reply.vote, reply.reason) == (pb.VOTE_DOWN, "没有提到试用期")
    await chat.operations.VoteRecord(vote(place.chat_id, record_id, pb.VOTE_UP), metadata=place.key)
    await chat.operations.VoteRecord(vote(place.chat_id, record_id, pb.VOTE_UP), metadata=operator)

    stored = await votes_on(sessions, record_id)
    visitors = [v for v in stored if v.startswith("visitor:")]
    assert len(stored) == 3 and len(visitors) == 1, stored
    assert stored[visitors[0]] == ("down", "没有提到试用期")
    assert stored[f"key:{place.key_id}"] == ("up", "") and stored["operator"] == ("up", "")

    # Each reader sees its own vote on the record, nobody else's.
    mine = await chat.answers.GetRecord(
        pb.GetRecordRequest(chat_id=place.chat_id, record_id=str(record_id)), metadata=place.alice
    )
    assert (mine.record.vote, mine.record.vote_reason) == (pb.VOTE_DOWN, "没有提到试用期")
    listed = await chat.answers.ListRecords(pb.ListRecordsRequest(chat_id=place.chat_id), metadata=place.key)
    assert listed.records[0].vote == pb.VOTE_UP and listed.records[0].vote_reason == ""

    reply = await chat.operations.VoteRecord(
        vote(place.chat_id, record_id, pb.VOTE_UNSPECIFIED, "ignored"), metadata=place.alice
    )
    assert (reply.vote, reply.reason) == (pb.VOTE_UNSPECIFIED, "")
    assert set(await votes_on(sessions, record_id)) == {"operator", f"key:{place.key_id}"}
    mine = await chat.answers.GetRecord(
        pb.GetRecordRequest(chat_id=place.chat_id, record_id=str(record_id)), metadata=place.alice
    )
    assert mine.record.vote == pb.VOTE_UNSPECIFIED
    # Withdrawing a vote that is not there is not an error: the outcome is what was asked for.
    await chat.operations.VoteRecord(vote(place.chat_id, record_id, pb.VOTE_UNSPECIFIED), metadata=place.alice)


async def test_votes_sent_at_once_by_one_caller_leave_one_row(chat, operator, sessions: Sessions, unique: str) -> None:
    place = await new_place(chat, operator, sessions, f"race-{unique}")
    record_id = await add_record(sessions, place.chat_id, status=RecordStatus.ANSWERED)
    values = [pb.VOTE_UP, pb.VOTE_DOWN] * 10
    await asyncio.gather(
        *(
            chat.operations.VoteRecord(vote(place.chat_id, record_id, v, f"r{i}"), metadata=place.alice)
            for i, v in enumerate(values)
        )
    )
    stored = await votes_on(sessions, record_id)
    assert len(stored) == 1
    [(value, reason)] = stored.values()
    assert value in {"up", "down"} and reason.startswith("r")


async def test_a_record_the_caller_cannot_see_is_not_found_and_nothing_is_written(
    chat, operator, sessions: Sessions, unique: str
) -> None:
    place = await new_place(chat, operator, sessions, f"hidden-{unique}")
    other = await new_place(chat, operator, sessions, f"other-{unique}")
    record_id = await add_record(sessions, place.chat_id, status=RecordStatus.ANSWERED)
    elsewhere = await add_record(sessions, other.chat_id, status=RecordStatus.ANSWERED)
    refused = [
        (vote(place.chat_id, record_id, pb.VOTE_DOWN), place.bob),  # another visitor's chat
        (vote(place.chat_id, record_id, pb.VOTE_DOWN), other.alice),  # a visitor of another application
        (vote(place.chat_id, record_id, pb.VOTE_DOWN), other.key),  # another application's key
        (vote(place.chat_id, elsewhere, pb.VOTE_DOWN), place.alice),  # a record of another chat
        (vote(place.chat_id, 2**62, pb.VOTE_DOWN), place.alice),  # no such record
    ]
    for request, caller in refused:
        code, message = await status_of(chat.operations.VoteRecord(request, metadata=caller))
        assert (code, message) == (grpc.StatusCode.NOT_FOUND, str(NOT_VISIBLE)), request
    assert await votes_on(sessions, record_id) == {} and await votes_on(sessions, elsewhere) == {}
    # The chat must belong to the application the request names, even for the operator.
    wrong_application = vote(place.chat_id, record_id, pb.VOTE_UP)
    wrong_application.application_id = other.application_id
    code, _ = await status_of(chat.operations.VoteRecord(wrong_application, metadata=operator))
    assert code == grpc.StatusCode.NOT_FOUND and await votes_on(sessions, record_id) == {}
    # The operator is told plainly, since it may see everything.
    code, message = await status_of(
        chat.operations.VoteRecord(vote(place.chat_id, elsewhere, pb.VOTE_UP), metadata=operator)
    )
    assert code == grpc.StatusCode.NOT_FOUND and f"record {elsewhere} does not exist in chat" in message


async def test_bad_votes_are_refused_with_reasons(chat, operator, sessions: Sessions, unique: str) -> None:
    place = await new_place(chat, operator, sessions, f"bad-{unique}")
    record_id = await add_record(sessions, place.chat_id, status=RecordStatus.ANSWERED)
    running = await add_record(sessions, place.chat_id, status=RecordStatus.RUNNING)

    code, message = await status_of(
        chat.operations.VoteRecord(vote(place.chat_id, record_id, pb.VOTE_DOWN, "长" * 501), metadata=place.alice)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "501 characters" in message and "500" in message
    code, message = await status_of(chat.operations.VoteRecord(vote(place.chat_id, record_id, 7), metadata=place.alice))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "unknown vote 7" in message
    code, message = await status_of(
        chat.operations.VoteRecord(
            pb.VoteRecordRequest(chat_id=place.chat_id, record_id="1 OR 1=1", vote=pb.VOTE_UP), metadata=place.alice
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "record_id" in message
    code, message = await status_of(
        chat.operations.VoteRecord(vote(place.chat_id, running, pb.VOTE_UP), metadata=place.alice)
    )
    assert code == grpc.StatusCode.ABORTED and message == str(STILL_RUNNING)
    assert await votes_on(sessions, record_id) == {} and await votes_on(sessions, running) == {}

    await chat.operations.VoteRecord(vote(place.chat_id, record_id, pb.VOTE_DOWN, "长" * 500), metadata=place.alice)
    [(value, reason)] = (await votes_on(sessions, record_id)).values()
    assert value == "down" and len(reason) == 500


# --- usage ---------------------------------------------------------------------------------

DAY1 = dt.datetime(2026, 3, 1)
DAY3 = dt.datetime(2026, 3, 3)
DAY4 = dt.datetime(2026, 3, 4)


async def seed_usage(sessions: Sessions, chat_id: str) -> None:
    """Four days: day 1 busy, day 2 empty, day 3 one answer, day 4 one answer at its last instant;
    records just outside the range on both sides."""
    answered = [  # run_time, rounds, stop reason, sufficient
        (1.0, 1, "sufficient", True),
        (2.0, 2, "sufficient", True),
        (3.0, 3, "max_rounds", False),
        (4.0, 0, "no_datasets", None),
        (10.0, 2, "sufficient", True),
    ]
    day1 = []
    for i, (run_time, rounds, reason, sufficient) in enumerate(answered):
        day1.append(
            await add_record(
                sessions,
                chat_id,
                status=RecordStatus.ANSWERED,
                run_time=run_time,
                rounds=rounds,
                stop_reason=reason,
                sufficient=sufficient,
                message_tokens=10,
                answer_tokens=20,
                created_at=DAY1 + dt.timedelta(hours=i),
            )
        )
    for status in (RecordStatus.FAILED, RecordStatus.STOPPED, RecordStatus.INTERRUPTED, RecordStatus.RUNNING):
        await add_record(
            sessions, chat_id, status=status, run_time=99.0, message_tokens=7, created_at=DAY1 + dt.timedelta(hours=20)
        )
    day3 = await add_record(
        sessions,
        chat_id,
        status=RecordStatus.ANSWERED,
        run_time=2.5,
        rounds=4,
        stop_reason="max_rounds",
        sufficient=False,
        message_tokens=5,
        answer_tokens=6,
        created_at=DAY3 + dt.timedelta(hours=12),
    )
    last_instant = DAY4 + dt.timedelta(days=1) - dt.timedelta(microseconds=1)
    await add_record(sessions, chat_id, status=RecordStatus.ANSWERED, run_time=7.0, created_at=last_instant)
    for outside in (DAY1 - dt.timedelta(microseconds=1), DAY4 + dt.timedelta(days=1)):
        await add_record(
            sessions, chat_id, status=RecordStatus.ANSWERED, run_time=50.0, message_tokens=1000, created_at=outside
        )
    async with sessions.begin() as session:
        session.add_all(
            [
                RecordVote(record_id=day1[0], voter="operator", vote="up"),
                RecordVote(record_id=day1[1], voter="operator", vote="up"),
                RecordVote(record_id=day3, voter="operator", vote="up"),
                RecordVote(record_id=day3, voter="visitor:x", vote="down", reason="错"),
            ]
        )


async def test_usage_per_day_on_known_records(chat, operator, sessions: Sessions, unique: str) -> None:
    application_id = await new_application(sessions, f"usage-{unique}")
    chat_id = (
        await chat.applications.OpenChat(pb.OpenChatRequest(application_id=application_id), metadata=operator)
    ).chat_id
    await seed_usage(sessions, chat_id)
    # Another application's records on the same days count only there.
    other = (
        await chat.applications.OpenChat(
            pb.OpenChatRequest(application_id=await new_application(sessions, f"o-{unique}")), metadata=operator
        )
    ).chat_id
    await add_record(sessions, other, status=RecordStatus.ANSWERED, run_time=1000.0, created_at=DAY1)

    usage = await chat.operations.Usage(
        pb.UsageRequest(application_id=application_id, date_from="2026-03-01", date_to="2026-03-04"), metadata=operator
    )
    assert [d.date for d in usage.days] == ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04"]
    day1, day2, day3, day4 = usage.days
    assert (day1.questions, day1.answered, day1.failed, day1.stopped, day1.interrupted) == (9, 5, 1, 1, 1)
    assert (day1.tokens_in, day1.tokens_out) == (5 * 10 + 4 * 7, 100)
    assert day1.p50_seconds == 3.0
    assert day1.p95_seconds == pytest.approx(4.0 + (10.0 - 4.0) * 0.8, abs=1e-9)  # rank 3.8 of 0..4
    assert day1.mean_rounds == 2.0  # (1+2+3+2)/4: a question that never searched has no rounds
    assert day1.insufficient == 1 and (day1.votes_up, day1.votes_down) == (2, 0)
    assert {(t.stop_reason, t.count) for t in day1.stop_reasons} == {
        (common_pb2.STOP_REASON_SUFFICIENT, 3),
        (common_pb2.STOP_REASON_MAX_ROUNDS, 1),
        (common_pb2.STOP_REASON_NO_DATASETS, 1),
    }
    assert [t.stop_reason for t in day1.stop_reasons] == sorted(t.stop_reason for t in day1.stop_reasons)

    assert day2 == pb.UsageDay(date="2026-03-02")  # an empty day: all zeros, still there
    assert (day3.questions, day3.answered, day3.p50_seconds, day3.p95_seconds, day3.mean_rounds) == (
        1,
        1,
        2.5,
        2.5,
        4.0,
    )
    assert (day3.insufficient, day3.votes_up, day3.votes_down, day3.tokens_in, day3.tokens_out) == (1, 1, 1, 5, 6)
    assert (day4.questions, day4.p50_seconds, day4.p95_seconds) == (1, 7.0, 7.0)


async def test_usage_refuses_bad_ranges_and_other_callers(chat, operator, sessions: Sessions, unique: str) -> None:
    place = await new_place(chat, operator, sessions, f"usage-bad-{unique}")
    for date_from, date_to, words in [
        ("2026-03-05", "2026-03-01", "is after date_to"),
        ("2025-01-01", "2026-01-02", "367 days"),
        ("2000-01-01", "2026-12-31", "at most 366"),
        ("2026-13-01", "2026-13-02", "YYYY-MM-DD"),
        ("yesterday", "", "date_from must be a day"),
        ("2026-3-1", "2026-03-02", "YYYY-MM-DD"),
    ]:
        request = pb.UsageRequest(application_id=place.application_id, date_from=date_from, date_to=date_to)
        code, message = await status_of(chat.operations.Usage(request, metadata=operator))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message, (date_from, date_to, message)
    request = pb.UsageRequest(application_id=place.application_id, date_from="2026-03-01", date_to="2026-03-01")
    for caller in (place.alice, place.key):
        code, _ = await status_of(chat.operations.Usage(request, metadata=caller))
        assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _ = await status_of(chat.operations.Usage(pb.UsageRequest(application_id="no-such-app"), metadata=operator))
    assert code == grpc.StatusCode.NOT_FOUND
    # No dates: the last seven days up to today (UTC), each present.
    usage = await chat.operations.Usage(pb.UsageRequest(application_id=place.application_id), metadata=operator)
    today = dt.datetime.now(dt.UTC).date()
    assert [d.date for d in usage.days] == [(today - dt.timedelta(days=6 - i)).isoformat() for i in range(7)]
    full_year = await chat.operations.Usage(
        pb.UsageRequest(application_id=place.application_id, date_from="2024-01-01", date_to="2024-12-31"),
        metadata=operator,
    )
    assert len(full_year.days) == 366 and all(d.questions == 0 for d in full_year.days)
