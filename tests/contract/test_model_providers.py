"""One contract, four providers: the real model client against fakes that behave like
api.openai.com, DeepSeek, DashScope (Qwen) and Ollama, with the deployment's defaults
(``disable_thinking=True``).

Whatever a provider does with the fields we send, the product's auxiliary jobs must keep
working (a real assessment, a rewrite, a summary), a refused field must cost one retry per
endpoint and not one per call, an answer's thinking must arrive apart from its text, and the
token counts must be the provider's own when it reports them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from kbcore.models.base import HistoryTurn, ReasoningDelta
from kbcore.models.openai_client import OpenAIModelClient
from services.retrieval.search.assessment import parse_assessment
from tests.fakes.openai_server import ChatReply, FakeOpenAI, Json, request_kind
from tests.fakes.providers import (
    COMPOUND,
    EVIDENCE,
    HISTORY,
    THINKING,
    FakeDashScope,
    FakeDeepSeek,
    FakeOllama,
    FakeStrictOpenAI,
    answer_request,
)

pytestmark = pytest.mark.asyncio

KEY = "sk-contract-0123456789abcdef"
USAGE = {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366}
MISSING = "第二部分：延期申请需要哪些材料"
QUERIES = ["行政许可 延期 申请材料"]
ASSESSMENT = {"sufficient": False, "missing": MISSING, "queries": QUERIES}


@dataclass(frozen=True)
class Case:
    fake: type[FakeOpenAI]
    provider: str  # KB_MODEL_PROVIDER; "" = detected (the fakes listen on 127.0.0.1: generic)
    thinking_field: str | None  # what the client must send to switch thinking off
    streams_thinking: bool  # the answer stream carries the model's thinking


CASES = {
    # The defaults against OpenAI: the generic profile's `thinking` is refused once, then dropped.
    "openai-detected-generic": Case(FakeStrictOpenAI, "", None, False),
    "openai": Case(FakeStrictOpenAI, "openai", None, False),
    "deepseek": Case(FakeDeepSeek, "deepseek", "thinking", True),
    "dashscope": Case(FakeDashScope, "dashscope", "enable_thinking", True),
    "ollama": Case(FakeOllama, "ollama", "reasoning_effort", True),
}


def route(body: Json) -> ChatReply:
    kind = request_kind(body)
    if kind == "assess":
        return ChatReply(json.dumps(ASSESSMENT, ensure_ascii=False))
    if kind == "rewrite":
        return ChatReply("云岭县行政许可的决定期限能延长吗？")
    if kind == "summarize":
        return ChatReply("问：行政许可多久作出决定｜答：18个工作日")
    return ChatReply.stream(["根据资料，", "18个工作日。"], usage=USAGE)


@pytest.fixture(params=list(CASES), scope="module")
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]


@pytest.fixture(scope="module")
def server(case: Case) -> Iterator[FakeOpenAI]:
    with case.fake(default=route) as running:
        yield running


@pytest.fixture
async def client(server: FakeOpenAI, case: Case) -> AsyncIterator[OpenAIModelClient]:
    server.reset()
    model = OpenAIModelClient(
        base_url=server.base_url,
        api_key=KEY,
        chat_model="chat-m",
        aux_model="aux-m",
        disable_thinking=True,
        provider=case.provider,
        max_retries=0,
        timeout=10,
    )
    yield model
    await model.aclose()


async def auxiliary_round(client: OpenAIModelClient) -> tuple[str, str, str]:
    rewritten = await client.rewrite(HISTORY, "能延长吗？")
    raw = await client.assess(COMPOUND, HISTORY, EVIDENCE, [COMPOUND])
    summary = await client.summarize("", [HistoryTurn("行政许可多久作出决定？", "18个工作日。")])
    return rewritten, raw, summary


async def test_auxiliary_jobs_work_and_a_refused_field_costs_one_retry(
    client: OpenAIModelClient, server: FakeOpenAI, case: Case
) -> None:
    for _ in range(3):
        rewritten, raw, summary = await auxiliary_round(client)
        decision = parse_assessment(raw)  # a real assessment, as the retrieval loop reads it
        assert (decision.sufficient, decision.missing, decision.queries) == (
            False,
            MISSING,
            tuple(QUERIES),
        )
        assert rewritten == "云岭县行政许可的决定期限能延长吗？"
        assert summary == "问：行政许可多久作出决定｜答：18个工作日"
        assert not any(piece in rewritten + raw + summary for piece in THINKING)  # thinking never leaks in
    refused_once = case.provider == "" and case.fake is FakeStrictOpenAI
    assert server.refusals == (1 if refused_once else 0)
    assert client.refused_fields == ({"thinking"} if refused_once else frozenset())
    bodies = server.chat_bodies
    assert len(bodies) == 9 + server.refusals
    answered = bodies[server.refusals :]  # after the one refusal, no body carries the field again
    if case.thinking_field is None:
        assert all(not {"thinking", "enable_thinking", "chat_template_kwargs"} & body.keys() for body in answered)
    else:
        assert all(case.thinking_field in body for body in answered)
    assess_bodies = [b for b in answered if request_kind(b) == "assess"]
    assert all(b["response_format"] == {"type": "json_object"} for b in assess_bodies)


async def test_the_answer_streams_thinking_apart_and_usage_is_the_providers(
    client: OpenAIModelClient, server: FakeOpenAI, case: Case
) -> None:
    stream = client.generate(answer_request())
    deltas = [delta async for delta in stream.deltas]
    thinking = [d.text for d in deltas if isinstance(d, ReasoningDelta)]
    text = [d for d in deltas if isinstance(d, str)]
    assert "".join(text) == "根据资料，18个工作日。"
    assert thinking == (list(THINKING) if case.streams_thinking else [])
    if thinking:  # the thinking comes first, as the providers stream it
        assert isinstance(deltas[0], ReasoningDelta) and isinstance(deltas[-1], str)
    assert (stream.usage.prompt_tokens, stream.usage.completion_tokens) == (321, 45)
    (body,) = server.chat_bodies
    assert body["stream_options"] == {"include_usage": True} and server.refusals == 0
    assert case.thinking_field is None or case.thinking_field not in body  # answers may think
