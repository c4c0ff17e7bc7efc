"""Stop works in every phase. A Stop while a retrieval round searches (a search made
slow by an embedder that never answers) or while the context loads (a context service that
never sends its context) ends the question within a second: the stream ends with ``done``, the
record is ``stopped`` with what exists (the rounds that started), the upstream call is
cancelled; also when the Stop reaches another chat-service process and travels by the lease row."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.context.v1 import context_service_pb2 as context_pb
from grpc_stubs.context.v1 import context_service_pb2_grpc as context_grpc
from kbcore.rpc.bootstrap import RunningServer
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import ChatStubs
from kbcore.settings import Settings
from services.chat.server import ChatDeps, create_server
from services.retrieval.embedding.embedders import Embedder
from tests.harness import Stack
from tests.slow_search import start_slow_search_stack
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
STOP_WITHIN = 1.0


class SlowContext(context_grpc.ContextServiceServicer):
    """A context service that says it is loading and then never sends the context."""

    def __init__(self) -> None:
        self.loading = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def LoadContext(self, request: Any, context: Any) -> AsyncIterator[context_pb.LoadContextResponse]:
        yield context_pb.LoadContextResponse(progress=common_pb2.Progress(context=common_pb2.ContextLoading()))
        self.loading.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise

    async def Compact(self, request: Any, context: Any) -> context_pb.CompactResponse:
        raise NotImplementedError("a question never compacts through this call")


@pytest.fixture
async def slow_search(stack: Stack, sessions: Any, store: Any, embedder: Embedder, offline_model: Any):
    running, slow = await start_slow_search_stack(stack, sessions, store, embedder, offline_model)
    yield running, slow
    await running.stop()


def stub(target: str, credential: str) -> tuple[ChatStubs, grpc.aio.Channel]:
    channel = open_channel(target, credential)
    return ChatStubs.of(channel), channel


async def open_chat(chat: ChatStubs, operator: Any) -> str:
    opened = await chat.applications.OpenChat(
        chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    return str(opened.chat_id)


async def read_all(call: Any, searching: asyncio.Event | None = None) -> list[chat_pb.AskResponse]:
    """The question's events; ``searching`` is set once the chat service has passed on a round's start."""
    events = []
    async for event in call:
        events.append(event)
        if searching is not None and event.progress.HasField("retrieving"):
            searching.set()
    return events


async def stop_and_time(
    asking: asyncio.Task[list[chat_pb.AskResponse]], stopper: ChatStubs, chat_id: str, operator: Any
) -> tuple[float, list[chat_pb.AskResponse]]:
    """Stop, and how long from the Stop call until the question's stream ended."""
    began = time.monotonic()
    reply = await stopper.answers.Stop(chat_pb.StopRequest(chat_id=chat_id), metadata=operator)
    assert reply.stopped, "the running question was reached"
    events = await asyncio.wait_for(asking, timeout=10)
    return time.monotonic() - began, events


async def stopped_record(chat: ChatStubs, chat_id: str, record_id: str, operator: Any) -> Any:
    reply = await chat.answers.GetRecord(
        chat_pb.GetRecordRequest(chat_id=chat_id, record_id=record_id), metadata=operator
    )
    return reply.record


async def test_a_stop_during_a_slow_retrieval_round_ends_the_question_within_a_second(slow_search: Any) -> None:
    running, slow = slow_search
    operator = bearer(operator_token(running.settings))
    chat, channel = stub(running.chat_target, running.credential)
    try:
        chat_id = await open_chat(chat, operator)
        round_started = asyncio.Event()
        call = chat.answers.Ask(chat_pb.AskRequest(chat_id=chat_id, message=QUESTION), metadata=operator)
        asking = asyncio.create_task(read_all(call, round_started))
        await asyncio.wait_for(asyncio.gather(slow.searching.wait(), round_started.wait()), timeout=10)
        elapsed, events = await stop_and_time(asking, chat, chat_id, operator)
        assert elapsed < STOP_WITHIN, f"the stream ended {elapsed:.2f} s after the Stop"
        assert events[-1].HasField("done"), "a stopped question still ends with done"
        assert not any(e.HasField("delta") for e in events)
        record = await stopped_record(chat, chat_id, events[-1].done.record_id, operator)
        assert record.status == common_pb2.RECORD_STATUS_STOPPED
        assert record.error == "stopped by the user"
        rounds = record.details.retrieval.rounds
        assert [r.round for r in rounds] == [1] and list(rounds[0].queries) == [QUESTION], "the round that ran is kept"
        await asyncio.wait_for(slow.cancelled.wait(), timeout=2)  # the search itself was called off
        idle = await chat.answers.Stop(chat_pb.StopRequest(chat_id=chat_id), metadata=operator)
        assert not idle.stopped, "nothing runs any more: the chat was released"
    finally:
        await channel.close()


async def test_a_stop_that_reaches_another_process_during_retrieval_ends_it_within_a_second(
    slow_search: Any, sessions: Any, offline_model: Any
) -> None:
    """The Stop is received by a second chat-service process; the answering one sees it in the
    lease row (polled every quarter second) and ends the question."""
    running, slow = slow_search
    operator = bearer(operator_token(running.settings))
    deps = ChatDeps(
        sessions,
        offline_model,
        open_channel(running.context_target, running.credential),
        open_channel(running.retrieval_target, running.credential),
    )
    other = await create_server(running.settings, deps, port=0)
    chat, channel = stub(running.chat_target, running.credential)
    other_chat, other_channel = stub(f"127.0.0.1:{other.port}", running.credential)
    try:
        chat_id = await open_chat(chat, operator)
        asking = asyncio.create_task(
            read_all(chat.answers.Ask(chat_pb.AskRequest(chat_id=chat_id, message=QUESTION), metadata=operator))
        )
        await asyncio.wait_for(slow.searching.wait(), timeout=10)
        elapsed, events = await stop_and_time(asking, other_chat, chat_id, operator)
        assert elapsed < STOP_WITHIN, f"the stream ended {elapsed:.2f} s after the Stop"
        assert events[-1].HasField("done")
        record = await stopped_record(chat, chat_id, events[-1].done.record_id, operator)
        assert record.status == common_pb2.RECORD_STATUS_STOPPED
    finally:
        await channel.close()
        await other_channel.close()
        await other.stop(grace=0)
        await deps.context_channel.close()
        await deps.retrieval_channel.close()


@pytest.fixture
async def slow_context(
    stack: Stack, sessions: Any, offline_model: Any
) -> AsyncIterator[tuple[RunningServer, SlowContext]]:
    """A chat service whose context service never sends the context (retrieval is the stack's)."""
    fake = SlowContext()
    server = grpc.aio.server()
    context_grpc.add_ContextServiceServicer_to_server(fake, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    credential = stack.credential
    deps = ChatDeps(
        sessions,
        offline_model,
        open_channel(f"127.0.0.1:{port}", credential),
        open_channel(stack.retrieval_target, credential),
    )
    chat_server = await create_server(stack.settings, deps, port=0)
    yield chat_server, fake
    await chat_server.stop(grace=0)
    await deps.context_channel.close()
    await deps.retrieval_channel.close()
    await server.stop(grace=0)


async def test_a_stop_while_the_context_loads_ends_the_question_within_a_second(
    slow_context: tuple[RunningServer, SlowContext], settings: Settings
) -> None:
    chat_server, fake = slow_context
    operator = bearer(operator_token(settings))
    chat, channel = stub(f"127.0.0.1:{chat_server.port}", service_credential(settings))
    try:
        chat_id = await open_chat(chat, operator)
        asking = asyncio.create_task(
            read_all(chat.answers.Ask(chat_pb.AskRequest(chat_id=chat_id, message=QUESTION), metadata=operator))
        )
        await asyncio.wait_for(fake.loading.wait(), timeout=10)
        elapsed, events = await stop_and_time(asking, chat, chat_id, operator)
        assert elapsed < STOP_WITHIN, f"the stream ended {elapsed:.2f} s after the Stop"
        assert events[-1].HasField("done")
        assert not any(e.HasField("delta") for e in events)
        record = await stopped_record(chat, chat_id, events[-1].done.record_id, operator)
        assert record.status == common_pb2.RECORD_STATUS_STOPPED and record.answer == ""
        assert not record.details.HasField("context"), "no context was loaded, none is claimed"
        await asyncio.wait_for(fake.cancelled.wait(), timeout=2)  # the LoadContext call was cancelled
    finally:
        await channel.close()
