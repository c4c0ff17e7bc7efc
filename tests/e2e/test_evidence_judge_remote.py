"""A remote model with the evidence judge switched on (``KB_AGENT_EVIDENCE_JUDGE``): the
retrieval service judges each round before asking the model, so a question whose every part
the judge verifies costs no assessment call, and its trace says the judge decided."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import RetrievalStubs
from services.retrieval.search.loop import BY_JUDGE
from tests.fakes.openai_server import FakeOpenAI, client_for, request_kind
from tests.harness import Stack, start_stack
from tools.seed_demo import DEMO_DATASET_ID

VERIFIED = "星澜科技规定员工应当在费用发生后多少日内提交报销申请？"


@pytest.fixture
async def judged_stack(stack: Stack, fake_model: FakeOpenAI, sessions, store, embedder) -> AsyncIterator[Stack]:
    fake_model.reset()
    model = client_for(fake_model, disable_thinking=True)
    settings = dataclasses.replace(stack.settings, agent_evidence_judge=True)
    running = await start_stack(settings, sessions=sessions, store=store, embedder=embedder, model=model)
    yield running
    await running.stop()
    await model.aclose()


async def retrieve(stack: Stack, question: str) -> retrieval_pb.RetrieveResponse:
    channel = open_channel(stack.retrieval_target, stack.credential)
    try:
        stubs = RetrievalStubs.of(channel)
        request = retrieval_pb.RetrieveRequest(question=question, dataset_ids=[DEMO_DATASET_ID])
        replies: list[retrieval_pb.RetrieveResponse] = [reply async for reply in stubs.search.Retrieve(request)]
    finally:
        await channel.close()
    return replies[-1]


async def test_a_verified_question_asks_the_remote_model_nothing(judged_stack: Stack, fake_model: FakeOpenAI) -> None:
    reply = await retrieve(judged_stack, VERIFIED)
    result = reply.result
    assert result.sufficient and result.rounds[0].assessed_by == BY_JUDGE
    assert [request_kind(body) for body in fake_model.chat_bodies].count("assess") == 0


async def test_without_the_judge_the_remote_model_assesses(remote_stack: Stack, fake_model: FakeOpenAI) -> None:
    reply = await retrieve(remote_stack, VERIFIED)
    assert reply.result.rounds[0].assessed_by == ""
    assert [request_kind(body) for body in fake_model.chat_bodies].count("assess") == 1
