"""The fault suite, at the chat service over gRPC: what a caller hears when the
database is away or our code fails, NUL text refused at the entry, records a dead
process left ``running`` closed when a chat service starts and then periodically, and a
Stop that says whether it stopped."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from sqlalchemy import delete, update

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.context.v1.context_service_pb2_grpc import ContextServiceStub
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.lease import INTERRUPTED_ERROR, LeaseStore
from kbcore.db.tables import ChatLock, ChatRecord, utcnow
from kbcore.rpc.bootstrap import RunningServer
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from kbcore.settings import Settings
from kbcore.words.said import Said
from services.chat.answering.ask import AskFlow, Question, Upstreams
from services.chat.answering.failures import CLIENT_GONE
from services.chat.answering.running import RunningQuestions
from services.chat.server import ChatDeps, create_server
from services.chat.store import ChatStore
from tests.eventually import eventually, passed
from tests.grpc_status import status_of
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

pytestmark = pytest.mark.fault

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
ERROR_ID = re.compile(r"error id ([0-9a-f]{12})")


async def start_chat_service(stack: Stack, sessions: Any, model: Any, **changes: Any) -> RunningServer:
    """Another chat service on the stack's upstreams, on ``sessions`` (its own database)."""
    settings = dataclasses.replace(stack.settings, **changes)
    deps = ChatDeps(
        sessions=sessions,
        model=model,
        context_channel=open_channel(stack.context_target, stack.credential),
        retrieval_channel=open_channel(stack.retrieval_target, stack.credential),
    )
    return await create_server(settings, deps, port=0)


@pytest.fixture
async def chat_on_dead_database(stack: Stack, offline_model: Any) -> AsyncIterator[ChatStubs]:
    """A chat service whose PostgreSQL refuses connections (nothing listens on port 1)."""
    engine = create_engine("postgresql://kb:secret@127.0.0.1:1/kbdead")
    server = await start_chat_service(stack, session_factory(engine), offline_model)
    channel = open_channel(f"127.0.0.1:{server.port}", stack.credential)
    yield ChatStubs.of(channel)
    await channel.close()
    await server.stop(grace=0)
    await engine.dispose()


def assert_generic(message: str) -> None:
    for internal in ("127.0.0.1", "kbdead", "secret", "port 1", "SELECT", "psycopg"):
        assert internal not in message, message


async def test_a_database_that_refuses_connections_is_unavailable_not_internal(
    chat_on_dead_database: ChatStubs, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Every call during a database outage answers UNAVAILABLE (HTTP 503) with a message
    that names no host, port or database but carries the error id of the log line that has the
    driver's words: through the servicer (the operator's call), through the token lookup that
    runs before it (an API key), and for a question (before: INTERNAL, or UNKNOWN with the
    driver's text)."""
    chat = chat_on_dead_database
    operator = bearer(operator_token(settings))
    calls = {
        "ListApplications": chat.applications.ListApplications(chat_pb.ListApplicationsRequest(), metadata=operator),
        "OpenChat (API key)": chat.applications.OpenChat(
            chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=bearer("application-0123456789")
        ),
        "Ask": chat.answers.Ask(chat_pb.AskRequest(chat_id="c" * 32, message="年假"), metadata=operator),
    }
    for name, call in calls.items():
        code, message = await status_of(call)
        assert code == grpc.StatusCode.UNAVAILABLE, (name, code, message)
        assert message.startswith("the database is unavailable; try again shortly (error id "), (name, message)
        found = ERROR_ID.search(message)
        assert found, message
        logged = [r.getMessage() for r in caplog.records if found.group(1) in r.getMessage()]
        assert logged and "127.0.0.1" in logged[0], "the log line with the id has the driver's words"
        assert_generic(message)


async def test_an_unexpected_exception_is_internal_with_an_error_id_that_the_log_has(
    chat: ChatStubs,
    operator: tuple[tuple[str, str], ...],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fault of ours is INTERNAL with a generic message carrying an error id; the service
    log has the same id with the full traceback (before: no id, nothing to find it by)."""

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("SELECT * FROM chat_record WHERE token = 'hunter2'")

    monkeypatch.setattr(ChatStore, "list_records", broken)
    opened = await chat.applications.OpenChat(
        chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    with caplog.at_level(logging.ERROR):
        code, message = await status_of(
            chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=opened.chat_id), metadata=operator)
        )
    assert code == grpc.StatusCode.INTERNAL
    assert "hunter2" not in message and "SELECT" not in message and "RuntimeError" not in message
    found = ERROR_ID.search(message)
    assert found, message
    logged = [r for r in caplog.records if found.group(1) in r.getMessage()]
    assert logged, "the error id is in the service log"
    assert logged[0].exc_info is not None and "hunter2" in str(logged[0].exc_info[1]), "with the traceback"


async def test_nul_characters_are_refused_before_they_reach_the_database(
    chat: ChatStubs, operator: tuple[tuple[str, str], ...]
) -> None:
    """NUL in a question, a chat id, an access token or a name is INVALID_ARGUMENT naming
    the field, for every method (before: stored on SQLite, the SQL statement on PostgreSQL)."""
    opened = await chat.applications.OpenChat(
        chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    calls = {
        "message": chat.answers.Ask(
            chat_pb.AskRequest(chat_id=opened.chat_id, message="年假\x00多少天"), metadata=operator
        ),
        "chat_id": chat.answers.GetRecord(
            chat_pb.GetRecordRequest(chat_id="ab\x00cd", record_id="1"), metadata=operator
        ),
        "access_token": chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token="tok\x00en")),
        "application.name": chat.applications.CreateApplication(
            chat_pb.CreateApplicationRequest(application=chat_pb.Application(name="名\x00字")), metadata=operator
        ),
    }
    for field, call in calls.items():
        code, message = await status_of(call)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (field, code, message)
        assert message == f"{field} must not contain NUL characters", message
    records = await chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=opened.chat_id), metadata=operator)
    assert not records.records, "the refused question left no record"


async def _running_record(sessions: Any, chat_id: str, holder: str, answer: str = "") -> int:
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=chat_id, question="问", answer=answer, holder=holder, status="running")
        session.add(record)
        await session.flush()
        return int(record.id)


async def _lease(sessions: Any, chat_id: str, holder: str, expires_in: float) -> None:
    async with sessions.begin() as session:
        now = utcnow()
        session.add(
            ChatLock(
                chat_id=chat_id,
                holder=holder,
                purpose="question",
                acquired_at=now,
                expires_at=now + dt.timedelta(seconds=expires_in),
                stop_requested=False,
            )
        )


async def _status(sessions: Any, record_id: int) -> tuple[str, str, Said | None]:
    async with sessions() as session:
        record = await session.get(ChatRecord, record_id, populate_existing=True)
        assert record is not None
        return record.status, record.answer, record.error


async def _forget(sessions: Any, chat_ids: list[str]) -> None:
    """Leave no lease or running record behind in the shared test database."""
    async with sessions.begin() as session:
        await session.execute(delete(ChatLock).where(ChatLock.chat_id.in_(chat_ids)))
        await session.execute(
            update(ChatRecord)
            .where(ChatRecord.chat_id.in_(chat_ids), ChatRecord.status == "running")
            .values(status="interrupted")
        )


async def test_a_starting_chat_service_closes_records_a_dead_process_left_running(
    stack: Stack, sessions: Any, offline_model: Any
) -> None:
    """At start, a chat service marks ``interrupted`` (keeping the saved part) the running
    records whose holder's lease is gone or expired, and leaves alone one whose holder is alive;
    then it sweeps again once per lease TTL (before: they stayed ``running`` across restarts)."""
    store = ChatStore(sessions)
    chats = [(await store.open_chat(DEMO_APPLICATION_ID, None)).id for _ in range(4)]
    try:
        no_lease = await _running_record(sessions, chats[0], "ask-dead-no-lease", answer="已保存的部分")
        expired = await _running_record(sessions, chats[1], "ask-dead-expired")
        await _lease(sessions, chats[1], "ask-dead-expired", expires_in=-1)
        alive = await _running_record(sessions, chats[2], "ask-alive")
        await _lease(sessions, chats[2], "ask-alive", expires_in=60)

        server = await start_chat_service(stack, sessions, offline_model, lock_ttl=0.5)
        try:
            assert await _status(sessions, no_lease) == ("interrupted", "已保存的部分", INTERRUPTED_ERROR)
            assert (await _status(sessions, expired))[0] == "interrupted"
            assert (await _status(sessions, alive))[0] == "running", "a live holder's record is not touched"

            later = await _running_record(sessions, chats[3], "ask-died-after-start")
            closed = await eventually(
                lambda: _status(sessions, later), lambda status: status[0] != "running", timeout=5, interval=0.05
            )
            assert closed[0] == "interrupted", "the periodic sweep closes it"
        finally:
            await server.stop(grace=0)
    finally:
        await _forget(sessions, chats)


async def test_stop_on_a_chat_whose_holder_is_dead_says_it_did_not_stop(
    chat: ChatStubs, operator: tuple[tuple[str, str], ...], sessions: Any
) -> None:
    """The chat's lease is held by a process that died (not yet expired) and its record is
    ``running``: nothing can honour a stop, so Stop answers ``stopped: false`` (before: true)."""
    opened = await chat.applications.OpenChat(
        chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    try:
        await _running_record(sessions, opened.chat_id, "ask-killed-holder")
        await _lease(sessions, opened.chat_id, "ask-killed-holder", expires_in=60)
        reply = await chat.answers.Stop(chat_pb.StopRequest(chat_id=opened.chat_id), metadata=operator)
        assert reply.stopped is False
        idle = await chat.applications.OpenChat(
            chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
        )
        reply = await chat.answers.Stop(chat_pb.StopRequest(chat_id=idle.chat_id), metadata=operator)
        assert reply.stopped is False, "nothing runs there"
    finally:
        await _forget(sessions, [opened.chat_id])


@pytest.fixture
async def flow(stack: Stack, sessions: Any, offline_model: Any) -> AsyncIterator[AskFlow]:
    """The chat service's question flow on the stack's upstreams, driven directly by a test."""
    store = ChatStore(sessions)
    leases = LeaseStore(sessions, stack.settings.lock_ttl)
    context, retrieval = (
        open_channel(stack.context_target, stack.credential),
        open_channel(stack.retrieval_target, stack.credential),
    )
    upstreams = Upstreams(ContextServiceStub(context), RetrievalStubs.of(retrieval))
    yield AskFlow(stack.settings, store, leases, upstreams, offline_model, RunningQuestions())
    await context.close()
    await retrieval.close()


async def _closed_properly(sessions: Any, chat_id: str) -> None:
    """The chat's one record is ``stopped`` (the client left) and its lease is gone."""
    records, _ = await ChatStore(sessions).list_records(chat_id, 1, 10)
    assert [(r.status, r.error) for r in records] == [("stopped", CLIENT_GONE)]
    assert not await LeaseStore(sessions, 30).is_held_by(chat_id, records[0].holder)


async def test_a_stream_closed_at_its_first_event_closes_the_record_before_the_lease_goes(
    flow: AskFlow, sessions: Any
) -> None:
    """The answer stream is closed right after its first event (a client that leaves at
    once: gRPC drops the stream where it stands). By the time the close returns the record is
    ``stopped`` and the lease released (before: the lease went while the inner answer, still
    suspended at its first event, was left for the garbage collector: a ``running`` record with
    no lease, for good when a reference cycle kept it)."""
    store = ChatStore(sessions)
    application = await store.get_application(DEMO_APPLICATION_ID)
    for _ in range(3):
        chat_id = (await store.open_chat(DEMO_APPLICATION_ID, None)).id
        events = flow.run(application, chat_id, Question(QUESTION))
        first = await anext(events)
        assert first.WhichOneof("event") == "started"
        await events.aclose()
        await _closed_properly(sessions, chat_id)


async def test_a_question_cancelled_while_its_record_commits_is_closed_and_its_lease_released(
    flow: AskFlow, sessions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client goes away while the lease and record are being committed (the commit has
    happened, its reply is still on the way: a PostgreSQL round trip). The record is closed
    ``stopped`` and the chat released (before: the cancelled question never reached the block
    that releases the lease: the chat answered 409 for a lease TTL and the record stayed
    ``running``)."""
    store = ChatStore(sessions)
    original = ChatStore.begin_question
    committed, left = asyncio.Event(), asyncio.Event()

    async def slow_reply(self: ChatStore, *args: Any, **kwargs: Any) -> Any:
        started = await original(self, *args, **kwargs)
        committed.set()
        await left.wait()  # the commit's reply, in flight until the client has gone
        return started

    monkeypatch.setattr(ChatStore, "begin_question", slow_reply)
    application = await store.get_application(DEMO_APPLICATION_ID)
    chat_id = (await store.open_chat(DEMO_APPLICATION_ID, None)).id
    asking = asyncio.ensure_future(anext(flow.run(application, chat_id, Question(QUESTION))))
    await asyncio.wait_for(committed.wait(), 10)
    asking.cancel()
    left.set()
    with pytest.raises(asyncio.CancelledError):
        await asking
    await eventually(lambda: _closed_properly(sessions, chat_id), passed, timeout=5, interval=0.05)
