"""The conversation log (ListLog, ExportLog): questions asked through every door record where
they came from and how they ended; every filter selects exactly the records it names, text is
matched literally (``%``, ``_``, ``'`` and ``\\`` are characters, not wildcards), pages and the
export's bound hold, and every bad filter is a 4xx with a sentence."""

from __future__ import annotations

import datetime as dt
from typing import Any

import grpc
import pytest
from sqlalchemy import select

import services.chat.admin.conversation_log as chat_log
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.tables import ChatRecord, RecordVote
from kbcore.rpc.caller_token import bearer
from tests.grpc_status import status_of
from tools.seed_demo import DEMO_DATASET_ID

QUESTION = "员工年假有几天？"


async def new_application(chat, operator, unique: str, datasets: list[str]) -> str:
    created = await chat.applications.CreateApplication(
        chat_pb.CreateApplicationRequest(application=chat_pb.Application(name=f"日志-{unique}", dataset_ids=datasets)),
        metadata=operator,
    )
    return str(created.application.id)


async def ask(
    chat, metadata, application_id: str, source: common_pb2.RecordSource = common_pb2.RECORD_SOURCE_CHAT
) -> str:
    """One question in a new chat under ``metadata``; the record's id."""
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=application_id), metadata=metadata)
    request = chat_pb.AskRequest(chat_id=opened.chat_id, message=QUESTION, source=source)
    events = [event async for event in chat.answers.Ask(request, metadata=metadata)]
    assert events[-1].WhichOneof("event") == "done", events[-3:]
    return str(events[-1].done.record_id)


def listed(application_id: str, page: int = 1, page_size: int = 100, **filters: Any) -> chat_pb.ListLogRequest:
    return chat_pb.ListLogRequest(
        filter=chat_pb.LogFilter(application_id=application_id, **filters), page=page, page_size=page_size
    )


async def test_every_door_records_its_source_caller_and_outcome(chat, operator, sessions, unique) -> None:
    application_id = await new_application(chat, operator, unique, [DEMO_DATASET_ID])
    key = await chat.access.CreateApiKey(chat_pb.CreateApiKeyRequest(application_id=application_id), metadata=operator)
    link = await chat.access.CreateAccessToken(
        chat_pb.CreateAccessTokenRequest(application_id=application_id, access_num=10), metadata=operator
    )
    visitor = await chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=link.access_token))
    asked = {
        "page": await ask(chat, operator, application_id),
        "api_key": await ask(chat, bearer(key.key), application_id),
        "share_link": await ask(chat, bearer(visitor.token), application_id),
        "openai_api": await ask(chat, operator, application_id, common_pb2.RECORD_SOURCE_OPENAI_API),
    }

    log = await chat.operations.ListLog(listed(application_id), metadata=operator)
    assert log.total == 4
    assert [e.record.id for e in log.entries] == list(reversed(asked.values())), "newest first"
    names = {chat_pb.LOG_SOURCE_PAGE: "page", chat_pb.LOG_SOURCE_SHARE_LINK: "share_link"}
    names |= {chat_pb.LOG_SOURCE_API_KEY: "api_key", chat_pb.LOG_SOURCE_OPENAI_API: "openai_api"}
    for entry in log.entries:
        assert asked[names[entry.source]] == entry.record.id
        retrieval = entry.record.details.retrieval
        assert entry.application_id == application_id
        assert entry.stop_reason == retrieval.stop_reason != common_pb2.STOP_REASON_UNSPECIFIED
        assert entry.sufficient == retrieval.sufficient and entry.rounds == len(retrieval.rounds) >= 1
        assert entry.vote == chat_pb.VOTE_UNSPECIFIED and entry.votes_up == entry.votes_down == 0

    async with sessions() as session:
        rows = {
            r.id: r
            for r in await session.scalars(select(ChatRecord).where(ChatRecord.id.in_(map(int, asked.values()))))
        }
    assert rows[int(asked["api_key"])].caller_ref == key.id
    assert rows[int(asked["share_link"])].caller_ref == visitor.visitor_id
    assert rows[int(asked["page"])].caller_ref == "" and rows[int(asked["page"])].log_source == "page"

    shared = await chat.operations.ListLog(
        listed(application_id, sources=[chat_pb.LOG_SOURCE_SHARE_LINK]), metadata=operator
    )
    assert [e.record.id for e in shared.entries] == [asked["share_link"]] and shared.total == 1


async def test_a_question_without_datasets_is_logged_insufficient_with_its_stop_reason(chat, operator, unique) -> None:
    application_id = await new_application(chat, operator, unique, [])
    record_id = await ask(chat, operator, application_id)
    insufficient = await chat.operations.ListLog(listed(application_id, sufficient=False), metadata=operator)
    assert [e.record.id for e in insufficient.entries] == [record_id]
    assert insufficient.entries[0].stop_reason == common_pb2.STOP_REASON_NO_DATASETS
    none = await chat.operations.ListLog(listed(application_id, sufficient=True), metadata=operator)
    assert none.total == 0 and not none.entries


DAY = dt.datetime(2026, 1, 10, 10, 0, 0)
# name: (created_at, status, stop_reason, sufficient, rounds, log_source, question, answer)
ROWS: dict[str, tuple[Any, ...]] = {
    "r1": (DAY, "answered", "sufficient", True, 1, "page", "年假有几天", "5天"),
    "r2": (dt.datetime(2026, 1, 11, 23, 59, 59), "failed", "", None, 0, "share_link", "100% 满意吗", ""),
    "r3": (dt.datetime(2026, 1, 12), "stopped", "max_rounds", False, 3, "api_key", "a_b 是什么", "it's x"),
    "r4": (dt.datetime(2026, 1, 13), "answered", "no_new_evidence", False, 2, "openai_api", "path C:\\dir", "反斜杠"),
    "r5": (dt.datetime(2026, 1, 14), "answered", "sufficient", True, 1, "", "ABC", "100 percent"),
}
# record, voter, vote, reason, minutes after DAY
VOTES = [
    ("r1", "visitor:a", "up", "", 1),
    ("r3", "visitor:b", "down", "答非所问", 1),
    ("r3", "key:c", "up", "还行", 2),
    ("r4", "operator", "down", "", 1),
]


@pytest.fixture
async def logged(chat, operator, sessions, unique) -> tuple[str, dict[str, str]]:
    """An application whose one chat holds ROWS, written directly (dates and outcomes a live
    question cannot be made to have), with VOTES; its id and each row's record id."""
    application_id = await new_application(chat, operator, unique, [])
    chat_id = (
        await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=application_id), metadata=operator)
    ).chat_id
    async with sessions.begin() as session:
        records = {}
        for name, (created, status, stop, sufficient, rounds, source, question, answer) in ROWS.items():
            records[name] = ChatRecord(
                chat_id=chat_id,
                question=question,
                answer=answer,
                status=status,
                stop_reason=stop,
                sufficient=sufficient,
                rounds=rounds,
                log_source=source,
                created_at=created,
            )
            session.add(records[name])
        await session.flush()
        for name, voter, vote, reason, minutes in VOTES:
            at = DAY + dt.timedelta(minutes=minutes)
            session.add(
                RecordVote(
                    record_id=records[name].id, voter=voter, vote=vote, reason=reason, created_at=at, updated_at=at
                )
            )
        ids = {name: str(record.id) for name, record in records.items()}
    return application_id, ids


async def names_of(chat, operator, ids: dict[str, str], request: chat_pb.ListLogRequest) -> list[str]:
    by_id = {v: k for k, v in ids.items()}
    reply = await chat.operations.ListLog(request, metadata=operator)
    assert reply.total == len(reply.entries)
    return [by_id[e.record.id] for e in reply.entries]


async def test_each_filter_selects_exactly_its_records(chat, operator, logged) -> None:
    app, ids = logged
    S, V = common_pb2, chat_pb  # short names keep each case on one line

    async def only(**filters: Any) -> list[str]:
        return await names_of(chat, operator, ids, listed(app, **filters))

    assert await only() == ["r5", "r4", "r3", "r2", "r1"]
    assert await only(date_from="2026-01-11", date_to="2026-01-12") == ["r3", "r2"], "both days inclusive"
    assert await only(date_from="2026-01-10", date_to="2026-01-11") == ["r2", "r1"]
    assert await only(date_from="2026-01-13") == ["r5", "r4"] and await only(date_to="2026-01-10") == ["r1"]
    assert await only(statuses=[S.RECORD_STATUS_FAILED, S.RECORD_STATUS_STOPPED]) == ["r3", "r2"]
    assert await only(stop_reasons=[S.STOP_REASON_MAX_ROUNDS, S.STOP_REASON_NO_NEW_EVIDENCE]) == ["r4", "r3"]
    assert await only(stop_reasons=[S.STOP_REASON_UNSPECIFIED]) == ["r2"], "no stop reason: retrieval never ran"
    assert await only(sufficient=True) == ["r5", "r1"]
    assert await only(sufficient=False) == ["r4", "r3"], "unknown (None) is neither"
    assert await only(votes=[V.VOTE_DOWN]) == ["r4", "r3"]
    assert await only(votes=[V.VOTE_UP]) == ["r3", "r1"]
    assert await only(votes=[V.VOTE_UNSPECIFIED]) == ["r5", "r2"], "not voted"
    assert await only(votes=[V.VOTE_UP, V.VOTE_UNSPECIFIED]) == ["r5", "r3", "r2", "r1"]
    assert await only(sources=[V.LOG_SOURCE_API_KEY, V.LOG_SOURCE_OPENAI_API]) == ["r4", "r3"]
    assert await only(sources=[V.LOG_SOURCE_UNSPECIFIED]) == ["r5"], "records from before sources were kept"
    assert await only(sufficient=False, votes=[V.VOTE_DOWN], text="it's") == ["r3"], "filters combine"


async def test_text_matches_question_or_answer_literally(chat, operator, logged) -> None:
    app, ids = logged

    async def matching(text: str) -> list[str]:
        return await names_of(chat, operator, ids, listed(app, text=text))

    assert await matching("%") == ["r2"], "% is a character, not 'anything'"
    assert await matching("100%") == ["r2"], "'100 percent' does not match 100%"
    assert await matching("_") == ["r3"], "_ is a character, not 'any one character'"
    assert await matching("a_b") == ["r3"] and await matching("a%b") == []
    assert await matching("'") == ["r3"] and await matching("it's x") == ["r3"]
    assert await matching("\\") == ["r4"] and await matching("C:\\dir") == ["r4"]
    assert await matching("abc") == ["r5"], "case does not matter"
    assert await matching("反斜杠") == ["r4"], "the answer is searched too"
    assert await matching("' OR 1=1 --") == []


async def test_entries_carry_the_latest_vote_and_the_counts(chat, operator, logged) -> None:
    app, ids = logged
    reply = await chat.operations.ListLog(listed(app, votes=[chat_pb.VOTE_DOWN]), metadata=operator)
    by_id = {e.record.id: e for e in reply.entries}
    both = by_id[ids["r3"]]
    assert (both.votes_up, both.votes_down) == (1, 1)
    assert (both.vote, both.vote_reason) == (chat_pb.VOTE_UP, "还行"), "the latest of the two"
    assert (by_id[ids["r4"]].vote, by_id[ids["r4"]].votes_down) == (chat_pb.VOTE_DOWN, 1)
    assert both.stop_reason == common_pb2.STOP_REASON_MAX_ROUNDS and both.rounds == 3 and not both.sufficient
    assert both.source == chat_pb.LOG_SOURCE_API_KEY


async def test_pages_and_the_bounded_export(chat, operator, logged, monkeypatch) -> None:
    app, ids = logged
    pages = [await names_of_page(chat, operator, ids, listed(app, page=p, page_size=2)) for p in (1, 2, 3, 4)]
    assert pages == [(["r5", "r4"], 5), (["r3", "r2"], 5), (["r1"], 5), ([], 5)]

    exported = await chat.operations.ExportLog(listed(app, page=0, page_size=0, sufficient=False), metadata=operator)
    assert [e.record.id for e in exported.entries] == [ids["r4"], ids["r3"]] and exported.total == 2
    monkeypatch.setattr(chat_log, "MAX_EXPORT_ROWS", 3)
    cut = await chat.operations.ExportLog(listed(app), metadata=operator)
    assert [e.record.id for e in cut.entries] == [ids["r5"], ids["r4"], ids["r3"]]
    assert cut.total == 5, "the total says the export was cut"


async def names_of_page(chat, operator, ids, request) -> tuple[list[str], int]:
    by_id = {v: k for k, v in ids.items()}
    reply = await chat.operations.ListLog(request, metadata=operator)
    return [by_id[e.record.id] for e in reply.entries], reply.total


BAD_FILTERS: list[tuple[dict[str, Any], str]] = [
    ({"date_from": "2026-02-01", "date_to": "2026-01-01"}, "reversed"),
    ({"date_from": "0000-01-01"}, "YYYY-MM-DD"),
    ({"date_to": "99999-01-01"}, "YYYY-MM-DD"),
    ({"date_from": "not a date"}, "YYYY-MM-DD"),
    ({"date_from": "2026-02-30"}, "YYYY-MM-DD"),
    ({"date_to": "1969-12-31"}, "between 1970-01-01"),
    ({"text": "年" * 10_000}, "at most 200 characters, got 10000"),
    ({"statuses": [99]}, "unknown value(s) in statuses: 99"),
    ({"statuses": [0]}, "unspecified"),
    ({"votes": [7]}, "unknown value(s) in votes"),
]


@pytest.mark.parametrize(("filters", "words"), BAD_FILTERS)
async def test_bad_filters_are_invalid_with_a_sentence(chat, operator, filters, words) -> None:
    for call in (chat.operations.ListLog, chat.operations.ExportLog):
        code, message = await status_of(call(listed("", **filters), metadata=operator))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message, (call, message)


@pytest.mark.parametrize(("page", "page_size"), [(1, 0), (1, 1_000_000), (0, 20), (-1, 20), (1, -5)])
async def test_bad_pages_are_invalid(chat, operator, page, page_size) -> None:
    code, message = await status_of(
        chat.operations.ListLog(listed("", page=page, page_size=page_size), metadata=operator)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and (
        "page_size must be between 1 and 100" in message or "page must be 1 or more" in message
    )


async def test_unknown_application_is_not_found_and_only_the_operator_reads_the_log(chat, operator, unique) -> None:
    code, message = await status_of(chat.operations.ListLog(listed(f"no-such-{unique}"), metadata=operator))
    assert code == grpc.StatusCode.NOT_FOUND and f"no-such-{unique}" in message
    application_id = await new_application(chat, operator, unique, [])
    key = await chat.access.CreateApiKey(chat_pb.CreateApiKeyRequest(application_id=application_id), metadata=operator)
    for call in (chat.operations.ListLog, chat.operations.ExportLog):
        code, message = await status_of(call(listed(application_id), metadata=bearer(key.key)))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "operator" in message
