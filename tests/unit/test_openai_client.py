"""OpenAIModelClient against a real local server speaking the OpenAI protocol."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest
from aiohttp import web

from kbcore.models.base import (
    ChatMessage,
    EvidenceParagraph,
    GenerationRequest,
    HistoryTurn,
    ModelClient,
    ModelError,
    ReasoningDelta,
)
from kbcore.models.factory import create_model_client
from kbcore.models.failures import SENTENCES, FailureKind
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.models.openai_client import OpenAIModelClient
from kbcore.models.prompts import ASSESS_SYSTEM, REWRITE_SYSTEM, SUMMARIZE_SYSTEM
from kbcore.models.providers import PROFILES, detect_provider, provider_profile
from kbcore.text.tokens import count_tokens
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind


@contextlib.contextmanager
def raises_detail(pattern: str) -> Iterator[pytest.ExceptionInfo[ModelError]]:
    """A ModelError whose detail (what the log gets; its message is only its kind's sentence)
    matches ``pattern``."""
    with pytest.raises(ModelError) as caught:
        yield caught
    assert re.search(pattern, caught.value.detail), caught.value.detail


pytestmark = pytest.mark.asyncio

HISTORY = [ChatMessage("user", "云岭县行政许可多久作出决定？"), ChatMessage("assistant", "18个工作日。")]
EVIDENCE = [
    EvidenceParagraph("p1", "云岭县行政许可事项办理规定", "第五条", "应当自受理申请之日起18个工作日内作出决定。")
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as running:
        yield running


@pytest.fixture
def fake(server: FakeOpenAI) -> FakeOpenAI:
    server.reset()
    return server


@pytest.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[OpenAIModelClient]:
    model = OpenAIModelClient(
        base_url=fake.base_url,
        api_key="test-key",
        chat_model="chat-m",
        aux_model="aux-m",
        timeout=5,
        disable_thinking=True,
        max_retries=0,
    )
    yield model
    await model.aclose()


def request(messages: list[ChatMessage] | None = None, max_tokens: int | None = None) -> GenerationRequest:
    return GenerationRequest(
        messages=messages or [ChatMessage("system", "规则"), ChatMessage("user", "问题")],
        question="问题",
        problem_text="问题",
        evidence=EVIDENCE,
        sufficient=True,
        stop_reason="sufficient",
        missing="",
        max_tokens=max_tokens,
    )


# --- auxiliary calls ---------------------------------------------------------------------


async def test_rewrite_is_a_deterministic_short_call_with_thinking_disabled(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(ChatReply("  云岭县行政许可决定期限能否延长？\n"))
    assert await client.rewrite(HISTORY, "能延长吗？") == "云岭县行政许可决定期限能否延长？"
    (body,) = fake.chat_bodies
    assert body["model"] == "aux-m"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 512
    assert body["thinking"] == {"type": "disabled"}
    assert not body.get("stream")
    assert "response_format" not in body
    assert request_kind(body) == "rewrite"
    assert body["messages"][0] == {"role": "system", "content": REWRITE_SYSTEM}
    user = body["messages"][1]["content"]
    assert user.startswith("历史:[") and user.endswith("\n最后的问题:能延长吗？")
    assert json.loads(user[len("历史:") : user.index("\n最后的问题:")])[0]["content"] == HISTORY[0].content
    assert fake.requests[0].headers["authorization"] == "Bearer test-key"


async def test_rewrite_without_history_makes_no_call(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    assert await client.rewrite([], "白石镇下辖多少个村？") == "白石镇下辖多少个村？"
    assert fake.chat_bodies == []


async def test_assess_asks_for_a_json_object(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply('{"sufficient": false, "missing": "缺少延长期限", "queries": ["延长期限"]}'))
    raw = await client.assess("能延长吗？", HISTORY, EVIDENCE, ["能延长吗？"])
    assert json.loads(raw)["queries"] == ["延长期限"]
    (body,) = fake.chat_bodies
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 900 and body["temperature"] == 0
    assert body["messages"][0]["content"] == ASSESS_SYSTEM
    payload = json.loads(body["messages"][1]["content"])
    assert set(payload) == {"question", "history", "evidence", "already_searched"}
    assert payload["evidence"][0]["document_name"] == "云岭县行政许可事项办理规定"
    assert payload["already_searched"] == ["能延长吗？"]


async def test_assess_output_in_a_code_fence_comes_back_as_plain_json(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(ChatReply('```json\n{"sufficient": true, "missing": "", "queries": []}\n```'))
    assert json.loads(await client.assess("q", [], EVIDENCE, []))["sufficient"] is True


async def test_summarize_uses_its_own_prompt(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply("问：旧问题｜答：旧回答"))
    await client.summarize("", [HistoryTurn("旧问题", "旧回答")])
    (body,) = fake.chat_bodies
    assert body["messages"][0]["content"] == SUMMARIZE_SYSTEM and body["max_tokens"] == 1024


async def test_thinking_is_not_sent_when_not_disabled(fake: FakeOpenAI) -> None:
    model = OpenAIModelClient(base_url=fake.base_url, api_key=None, chat_model="m", max_retries=0)
    try:
        await model.rewrite(HISTORY, "q")
    finally:
        await model.aclose()
    (body,) = fake.chat_bodies
    assert "thinking" not in body and body["model"] == "m"


async def test_a_truncated_rewrite_is_an_error_not_a_rewrite(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply("云岭县行政许可决定期", finish_reason="length"))
    with pytest.raises(ModelError) as caught:
        await client.rewrite(HISTORY, "能延长吗？")
    assert "token limit" in caught.value.detail


async def test_an_error_status_is_unavailable_with_the_status_in_the_message(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(ChatReply.error(500, "upstream exploded"))
    with pytest.raises(ModelError) as caught:
        await client.assess("q", [], EVIDENCE, [])
    assert "500" in caught.value.detail and "upstream exploded" in caught.value.detail


async def test_an_empty_answer_is_a_bad_response(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply("   "))
    with pytest.raises(ModelError) as caught:
        await client.rewrite(HISTORY, "q")
    assert "empty answer" in caught.value.detail


async def test_a_slow_endpoint_times_out_as_unavailable(fake: FakeOpenAI) -> None:
    model = OpenAIModelClient(base_url=fake.base_url, api_key="k", chat_model="m", timeout=0.3, max_retries=0)
    fake.enqueue(ChatReply("late", delay=2))
    started = time.monotonic()
    try:
        with pytest.raises(ModelError) as caught:
            await model.rewrite(HISTORY, "q")
    finally:
        await model.aclose()
    assert "0.3s" in caught.value.detail
    assert time.monotonic() - started < 1.5


async def test_an_unreachable_endpoint_is_unavailable() -> None:
    with FakeOpenAI() as gone:
        base_url = gone.base_url
    model = OpenAIModelClient(base_url=base_url, api_key="k", chat_model="m", max_retries=0)
    try:
        with pytest.raises(ModelError) as caught:
            await model.summarize("", [HistoryTurn("q", "a")])
    finally:
        await model.aclose()
    assert "cannot reach" in caught.value.detail


# --- streaming answers -------------------------------------------------------------------


async def test_deltas_arrive_in_order_and_usage_comes_from_the_server(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(
        ChatReply.stream(["根据", "资料，", "18个工作日", "。"], usage={"prompt_tokens": 42, "completion_tokens": 7})
    )
    stream = client.generate(request(max_tokens=300))
    assert [d async for d in stream.deltas] == ["根据", "资料，", "18个工作日", "。"]
    assert (stream.usage.prompt_tokens, stream.usage.completion_tokens) == (42, 7)
    (body,) = fake.chat_bodies
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "chat-m" and body["temperature"] == 0.3 and body["max_tokens"] == 300
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "thinking" not in body  # thinking is an auxiliary-call setting


async def test_without_server_usage_the_tokens_are_estimated(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply.stream(["甲乙", "丙丁"], include_usage=False))
    stream = client.generate(request())
    assert "".join([str(d) async for d in stream.deltas]) == "甲乙丙丁"
    assert stream.usage.completion_tokens == count_tokens("甲乙丙丁")
    assert stream.usage.prompt_tokens == count_tokens("规则") + count_tokens("问题")


async def test_a_length_finish_on_the_stream_just_ends_the_answer(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply.stream(["答案写到", "一半"], finish_reason="length"))
    stream = client.generate(request())
    assert "".join([str(d) async for d in stream.deltas]) == "答案写到一半"


async def test_an_error_status_for_the_answer_is_unavailable(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply.error(503, "overloaded"))
    stream = client.generate(request())
    with pytest.raises(ModelError) as caught:
        await stream.deltas.__anext__()
    assert "503" in caught.value.detail


async def test_an_error_event_mid_stream_raises(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "chat-m"}
    first = json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": "部分"}, "finish_reason": None}]})
    error = json.dumps({"error": {"message": "model crashed", "type": "server_error"}})
    fake.enqueue(ChatReply(raw_events=[first, error]))
    received: list[str | ReasoningDelta] = []
    with pytest.raises(ModelError) as caught:
        async for delta in client.generate(request()).deltas:
            received.append(delta)
    assert received == ["部分"]
    assert "model crashed" in caught.value.detail


async def test_a_stream_that_stops_without_finishing_raises(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "chat-m"}
    only = json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": "半句"}, "finish_reason": None}]})
    fake.enqueue(ChatReply(raw_events=[only]))
    with pytest.raises(ModelError):
        async for _ in client.generate(request()).deltas:
            pass


async def test_a_stalled_stream_times_out(fake: FakeOpenAI) -> None:
    model = OpenAIModelClient(base_url=fake.base_url, api_key="k", chat_model="m", timeout=0.3, max_retries=0)
    fake.enqueue(ChatReply.hang(["开头"]))
    received: list[str | ReasoningDelta] = []
    try:
        with pytest.raises(ModelError) as caught:
            async for delta in model.generate(request()).deltas:
                received.append(delta)
    finally:
        await model.aclose()
    assert received == ["开头"] and "did not respond within 0.3s" in caught.value.detail
    assert await asyncio.to_thread(fake.wait_for_cancelled_stream, 1.0)  # the client hung up


async def test_closing_the_deltas_cancels_the_request_at_the_server(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(ChatReply.hang(["第一段"]))
    stream = client.generate(request())
    async with contextlib.aclosing(stream.deltas) as deltas:  # type: ignore[type-var]
        assert await deltas.__anext__() == "第一段"
    assert await asyncio.to_thread(fake.wait_for_cancelled_stream, 1.0)
    assert fake.cancelled_streams == 1
    assert stream.usage.completion_tokens == count_tokens("第一段")


async def test_cancelling_the_consumer_task_cancels_the_request_at_the_server(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(ChatReply.hang(["第一段"]))
    first = asyncio.Event()

    async def consume() -> None:
        async for _ in client.generate(request()).deltas:
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 2)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(fake.wait_for_cancelled_stream, 1.0)


# --- the fake's other endpoints, through the real client -----------------------------------


async def test_embeddings_and_models_work_through_the_real_client(fake: FakeOpenAI) -> None:
    raw = openai.AsyncOpenAI(base_url=fake.base_url, api_key="k", max_retries=0)
    try:
        result = await raw.embeddings.create(model="fake-embedding", input=["甲", "乙", "甲"])
        models = await raw.models.list()
    finally:
        await raw.close()
    vectors = [item.embedding for item in result.data]
    assert len(vectors[0]) == fake.embedding_dim
    assert vectors[0] == pytest.approx(vectors[2]) and vectors[0] != pytest.approx(vectors[1])
    assert sum(v * v for v in vectors[1]) == pytest.approx(1.0, rel=1e-5)
    assert [m.id for m in models.data] == fake.models


async def test_the_default_reply_can_route_by_job(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    replies = {"rewrite": "改写", "assess": '{"sufficient": true, "missing": "", "queries": []}', "summarize": "摘要"}
    fake.default = lambda body: ChatReply(replies.get(request_kind(body), "回答"))
    assert await client.rewrite(HISTORY, "q") == "改写"
    assert json.loads(await client.assess("q", [], EVIDENCE, []))["sufficient"] is True
    assert "".join([str(d) async for d in client.generate(request()).deltas]) == "回答"


# --- the factory -------------------------------------------------------------------------


async def test_factory_picks_offline_without_an_endpoint_and_remote_with_one(fake: FakeOpenAI) -> None:
    def create(base_url: str | None) -> ModelClient:
        return create_model_client(
            base_url=base_url, api_key=None, chat_model="chat-m", aux_model=None, timeout=5.0, disable_thinking=True
        )

    offline = create(None)
    assert isinstance(offline, OfflineExtractiveModel) and offline.is_offline
    remote = create(fake.base_url)
    try:
        assert isinstance(remote, OpenAIModelClient)
        assert remote.model_name == "chat-m" and remote.aux_model == "chat-m" and not remote.is_offline
    finally:
        await remote.aclose()


# --- the event-stream decoder ------------------------------------------------------------


async def test_events_are_decoded_however_the_bytes_are_cut() -> None:
    from kbcore.models.openai_client import _sse_data

    body = (
        b'data: {"a": "\xe4\xb8\xad"}\r\n\r\n'  # CRLF line ends, a multi-byte character
        b": a comment\n"
        b"event: message\nid: 7\ndata: line one\ndata:line two\n\n"  # fields, data over two lines
        b"data: lone CR\r\r"
        b"\n\n"  # blank lines with nothing pending dispatch nothing
        b"data: [DONE]\n\n"
        b"data: unterminated"  # no blank line: never dispatched
    )
    expected = ['{"a": "中"}', "line one\nline two", "lone CR", "[DONE]"]

    async def cut(size: int) -> AsyncIterator[bytes]:
        for start in range(0, len(body), size):
            yield body[start : start + size]

    for size in range(1, len(body) + 1):
        assert [data async for data in _sse_data(cut(size))] == expected, size


# --- provider profiles, refused fields, reasoning, bad input ---------------------

SECRET = "sk-live-abcdef0123456789"


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("https://api.openai.com/v1", "openai"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "dashscope"),
        ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "dashscope"),
        ("http://gpu-box:11434/v1", "ollama"),
        ("http://vllm.intranet:8000/v1", "generic"),
        ("http://127.0.0.1:9/v1", "generic"),
    ],
)
async def test_the_provider_is_detected_from_the_base_url(base_url: str, expected: str) -> None:
    assert detect_provider(base_url) == expected
    assert provider_profile("", base_url).name == expected


async def test_each_profile_spells_no_thinking_its_own_way_and_a_wrong_name_is_refused() -> None:
    no_thinking = {name: dict(profile.no_thinking) for name, profile in PROFILES.items()}
    assert no_thinking["openai"] == {}
    assert no_thinking["deepseek"] == no_thinking["generic"] == {"thinking": {"type": "disabled"}}
    assert no_thinking["dashscope"] == {"enable_thinking": False}
    assert no_thinking["vllm"] == no_thinking["sglang"] == {"chat_template_kwargs": {"enable_thinking": False}}
    assert no_thinking["ollama"] == {"reasoning_effort": "none"}
    assert provider_profile("DeepSeek", "http://x").name == "deepseek"  # an explicit name beats the host
    with pytest.raises(ValueError, match="unknown model provider 'openia'"):
        provider_profile("openia", "https://api.openai.com/v1")


async def test_vllm_profile_sends_chat_template_kwargs_on_auxiliary_calls_only(fake: FakeOpenAI) -> None:
    model = OpenAIModelClient(
        base_url=fake.base_url, api_key=None, chat_model="m", disable_thinking=True, provider="vllm", max_retries=0
    )
    try:
        await model.rewrite(HISTORY, "q")
        fake.enqueue(ChatReply.stream(["答"]))
        assert [d async for d in model.generate(request()).deltas] == ["答"]
    finally:
        await model.aclose()
    aux, answer = fake.chat_bodies
    assert aux["chat_template_kwargs"] == {"enable_thinking": False} and "thinking" not in aux
    assert "chat_template_kwargs" not in answer


@pytest.mark.parametrize(
    ("status", "message", "param"),
    [
        (400, "Unrecognized request argument supplied: thinking", None),  # api.openai.com, legacy wording
        (400, "Unknown parameter: 'thinking'.", "thinking"),  # api.openai.com, newer wording
        (422, "[{'loc': ['body', 'thinking'], 'msg': 'Extra inputs are not permitted'}]", None),  # pydantic servers
    ],
)
async def test_a_refused_field_is_dropped_once_remembered_and_logged_once(
    fake: FakeOpenAI,
    client: OpenAIModelClient,
    caplog: pytest.LogCaptureFixture,
    status: int,
    message: str,
    param: str | None,
) -> None:
    fake.enqueue(
        ChatReply(
            raw_body=json.dumps(
                {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
            ),
            status=status,
            content_type="application/json",
        )
    )
    with caplog.at_level(logging.WARNING, logger="kbcore.models.field_retry"):
        assert await client.rewrite(HISTORY, "q") == "fake answer"
        assert await client.summarize("", [HistoryTurn("q", "a")]) == "fake answer"
    first, retried, later = fake.chat_bodies
    assert "thinking" in first and "thinking" not in retried and "thinking" not in later
    assert client.refused_fields == {"thinking"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "refused thinking" in warnings[0] and "test-key" not in warnings[0]


async def test_a_400_about_something_else_is_not_retried(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply.error(400, "This model's maximum context length is 8192 tokens"))
    with raises_detail("maximum context length"):
        await client.rewrite(HISTORY, "q")
    assert len(fake.chat_bodies) == 1 and client.refused_fields == frozenset()


async def test_a_refused_field_on_the_retry_too_is_an_error_not_a_loop(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(
        ChatReply.error(400, "Unrecognized request argument supplied: thinking"),
        ChatReply.error(400, "Unrecognized request argument supplied: messages"),
    )
    with raises_detail("messages"):
        await client.rewrite(HISTORY, "q")
    assert len(fake.chat_bodies) == 2


async def test_the_answer_yields_reasoning_content_and_reasoning_apart_from_text(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    chunk = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "chat-m"}

    def event(delta: dict[str, object], finish: str | None = None) -> str:
        return json.dumps({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    fake.enqueue(
        ChatReply(
            raw_events=[
                event({"reasoning_content": "想一想", "content": None}),
                event({"reasoning": "再想", "content": ""}),
                event({"content": "答案"}),
                event({}, "stop"),
                "[DONE]",
            ]
        )
    )
    stream = client.generate(request())
    assert [d async for d in stream.deltas] == [ReasoningDelta("想一想"), ReasoningDelta("再想"), "答案"]
    assert stream.usage.completion_tokens == count_tokens("想一想再想答案")  # estimated: thinking is billed too


async def test_an_auxiliary_answer_ignores_reasoning_and_a_thinking_only_one_is_named(
    fake: FakeOpenAI, client: OpenAIModelClient
) -> None:
    fake.enqueue(ChatReply("改写", reasoning=["先想"]), ChatReply("", reasoning=["想了很久"]))
    assert await client.rewrite(HISTORY, "q") == "改写"
    with raises_detail("only its reasoning"):
        await client.rewrite(HISTORY, "q")


HTML = "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1>nginx</body></html>"


async def test_an_html_page_instead_of_json_is_named(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply(raw_body=HTML), ChatReply(raw_body=HTML, status=502))
    with raises_detail("assess: the model endpoint answered with an HTML page, not JSON"):
        await client.assess("q", [], EVIDENCE, [])
    with raises_detail("HTTP 502: an HTML page instead of an API error") as caught:
        await client.rewrite(HISTORY, "q")
    assert "nginx" not in caught.value.detail


async def test_an_html_page_instead_of_a_stream_is_named(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply(raw_body=HTML))
    with raises_detail("HTML page, not an event stream"):
        await client.generate(request()).deltas.__anext__()


async def test_a_stream_cut_mid_answer_is_named(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply.stream(["第一段", "第二段", "第三段"], cut_after=1))
    received: list[str | ReasoningDelta] = []
    with raises_detail("cut mid-answer"):
        async for delta in client.generate(request()).deltas:
            received.append(delta)
    assert received == ["第一段"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("I think the evidence is sufficient.", "is not JSON"),
        ('["sufficient"]', "is a JSON list, not an object"),
        ('{"sufficient": "yes", "missing": "", "queries": []}', "'sufficient' of type str"),
        ('{"missing": ""}', "'sufficient' of type NoneType"),
    ],
)
async def test_an_assessment_that_is_not_one_is_a_named_model_error(
    fake: FakeOpenAI, client: OpenAIModelClient, content: str, problem: str
) -> None:
    fake.enqueue(ChatReply(content))
    with raises_detail(problem):
        await client.assess("q", [], EVIDENCE, [])


async def test_a_length_finish_on_an_assessment_is_named(fake: FakeOpenAI, client: OpenAIModelClient) -> None:
    fake.enqueue(ChatReply('{"sufficient": tr', finish_reason="length"))
    with raises_detail("assess: the output hit the 900-token limit"):
        await client.assess("q", [], EVIDENCE, [])


async def test_the_api_key_never_appears_in_an_error(fake: FakeOpenAI) -> None:
    model = OpenAIModelClient(base_url=fake.base_url, api_key=SECRET, chat_model="m", max_retries=0)
    fake.enqueue(
        ChatReply.error(401, f"Incorrect API key provided: {SECRET}. You can find your API key at ..."),
        ChatReply.error(400, f"Unrecognized request argument supplied: {SECRET}"),
        ChatReply.error(404, f"The model `m` does not exist or you do not have access to it ({SECRET})"),
    )
    errors: list[str] = []
    try:
        for _ in range(3):
            with pytest.raises(ModelError) as caught:
                await model.rewrite(HISTORY, "q")
            errors.append(caught.value.detail)
            assert str(caught.value) == str(SENTENCES[FailureKind.REFUSED])
    finally:
        await model.aclose()
    assert all(SECRET not in error and "***" in error for error in errors), errors
    assert "HTTP 401" in errors[0] and "HTTP 404" in errors[2]


async def test_an_answer_the_endpoint_compressed_is_decoded() -> None:
    """Uncompressed answers are read as they arrive, past httpx2's decoders; a gzip-encoded
    stream (a proxy in front of the model may compress) still goes through them."""
    events: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]} for text in ("压缩", "的回答")
    ]
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = ("".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events) + "data: [DONE]\n\n").encode()

    async def answer(http_request: web.Request) -> web.Response:
        await http_request.read()
        if http_request.match_info["encoding"] == "gzip":
            headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
            return web.Response(body=gzip.compress(body), headers=headers)
        return web.Response(body=body, headers={"Content-Type": "text/event-stream"})

    app = web.Application()
    app.router.add_post("/{encoding}/v1/chat/completions", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        for encoding in ("identity", "gzip"):
            base_url = f"http://127.0.0.1:{port}/{encoding}/v1"
            model = OpenAIModelClient(base_url=base_url, api_key="k", chat_model="m", max_retries=0)
            answered = [d async for d in model.generate(request()).deltas]
            await model.aclose()
            assert answered == ["压缩", "的回答"], encoding
    finally:
        await runner.cleanup()
