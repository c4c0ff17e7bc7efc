"""Compaction and generation never overlap on one chat: both take the chat's lease, and the
Compact RPC follows LoadContext's rules through the same code path."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import grpc
import pytest

from grpc_stubs.context.v1 import context_service_pb2 as pb
from kbcore.db.lease import ChatBusy, LeaseStore, new_holder
from kbcore.models.failures import SENTENCES, FailureKind
from tests.fakes.openai_server import ChatReply, FakeOpenAI
from tests.grpc_status import status_of
from tests.services.conftest import StartContext
from tests.services.context_support import Sessions, add_turns, new_chat, stored_state, summarizer, text_of

BUDGET = 600


def turns_of(count: int, tokens: int) -> list[tuple[str, str]]:
    return [(text_of(10, f"C{i}Q."), text_of(tokens - 10, f"C{i}A.")) for i in range(1, count + 1)]


class Gate:
    """A summarizer that stops inside the model call until the test lets it go."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, body: dict[str, Any]) -> ChatReply:
        self.entered.set()
        assert self.release.wait(30), "the test never released the summarizer"
        return summarizer(body)

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, 30), "the summarizer was never called"


@pytest.fixture
def leases(sessions: Sessions) -> LeaseStore:
    return LeaseStore(sessions, ttl=30)


async def over_budget_chat(sessions: Sessions) -> str:
    chat = await new_chat(sessions)
    await add_turns(sessions, chat, turns_of(7, 100))  # 700 > 600 with keep 2
    return chat


async def test_compact_rpc_follows_the_load_rules(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    small = await new_chat(sessions)
    await add_turns(sessions, small, turns_of(10, 20))
    reply = await context.compact(small, dialogue_number=2)
    assert reply.compacted_now == 0 and reply.info.revision == 0 and reply.info.recent_rounds == 10
    assert fake.chat_bodies == []

    chat = await over_budget_chat(sessions)
    reply = await context.compact(chat, dialogue_number=2)
    assert reply.compacted_now == 5
    assert (reply.info.recent_rounds, reply.info.compacted_rounds, reply.info.revision) == (2, 5, 1)
    loaded = await context.load(chat, dialogue_number=2)
    assert loaded.phases == [], "nothing left to compact"
    assert loaded.info == reply.info, "Compact reports the context a load now carries"

    assert (await context.compact(chat, dialogue_number=0)).info.enabled is False
    assert (await context.compact(chat, dialogue_number=2)).compacted_now == 0


async def test_compact_reports_a_failed_summary_and_advances_nothing(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI
) -> None:
    context = await start_context(BUDGET)
    chat = await over_budget_chat(sessions)
    fake.enqueue(ChatReply.error(500, "summarizer down"))
    code, message = await status_of(context.stub.Compact(pb.CompactRequest(chat_id=chat, dialogue_number=2)))
    assert code == grpc.StatusCode.UNAVAILABLE and str(SENTENCES[FailureKind.UNAVAILABLE]) in message
    assert "summarizer down" not in message, "the endpoint's own words are the log's"
    assert await stored_state(sessions, chat) is None


async def test_a_running_question_blocks_compaction_by_others(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI, leases: LeaseStore
) -> None:
    context = await start_context(BUDGET)
    chat = await over_budget_chat(sessions)
    question = new_holder("ask")
    assert await leases.try_acquire(chat, question, "question")
    try:
        code, message = await status_of(context.stub.Compact(pb.CompactRequest(chat_id=chat)))
        assert code == grpc.StatusCode.ABORTED and "answering a question" in message

        loaded = await context.load(chat, dialogue_number=2)
        assert loaded.phases == [], "no compaction while someone else holds the chat"
        assert (loaded.info.recent_rounds, loaded.info.revision) == (7, 0)
        assert fake.chat_bodies == []

        # The question itself compacts under its own lease, and keeps holding it afterwards.
        loaded = await context.load(chat, dialogue_number=2, lease_holder=question)
        assert loaded.phases == ["compacting"] and loaded.info.revision == 1
        assert await leases.is_held_by(chat, question)
    finally:
        await leases.release(chat, question)


async def test_concurrent_compactions_on_one_chat_one_runs_the_other_is_refused(
    start_context: StartContext, sessions: Sessions, fake: FakeOpenAI, leases: LeaseStore
) -> None:
    context = await start_context(BUDGET)
    chat = await over_budget_chat(sessions)
    gate = Gate()
    fake.default = gate
    first = asyncio.create_task(context.compact(chat, dialogue_number=2))
    try:
        await gate.wait_entered()  # the first compaction holds the lease and is inside the model call

        code, message = await status_of(context.stub.Compact(pb.CompactRequest(chat_id=chat, dialogue_number=2)))
        assert code == grpc.StatusCode.ABORTED and "being compacted" in message
        loaded = await context.load(chat, dialogue_number=2)
        assert loaded.phases == [] and loaded.info.revision == 0, "a load does not compact alongside"
        assert not await leases.try_acquire(chat, new_holder("ask"), "question"), "a question would be refused"
        with pytest.raises(ChatBusy):
            async with leases.hold(chat, new_holder("ask"), "question"):
                pass
    finally:
        gate.release.set()
    reply = await first
    assert reply.compacted_now == 5 and reply.info.revision == 1
    assert len(fake.chat_bodies) == 1, "exactly one compaction called the model"
    state = await stored_state(sessions, chat)
    assert state is not None and (state.compacted_rounds, state.revision) == (5, 1)
    holder = new_holder("ask")
    assert await leases.try_acquire(chat, holder, "question"), "the compaction released the lease"
    await leases.release(chat, holder)
