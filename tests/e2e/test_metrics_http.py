"""Metrics: the in-process stack (``tests.harness``) asked over HTTP, its ``/metrics``
scraped over HTTP and read with Prometheus's own parser.

In this stack the gateway and the three services share one process, so one registry: the
gateway's ``/metrics`` route and a service's metrics server (``serve_metrics``, what
``run_service`` starts for each service process) show the same figures here. Which process
records which series is checked with real processes in ``test_metrics_processes.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from kbcore.metrics.catalog import Purpose
from kbcore.metrics.http_server import serve_metrics
from kbcore.models.offline.model import OFFLINE_MODEL_NAME
from kbcore.vocabulary import RECORD_STATUS, STOP_REASON
from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import Stack
from tests.metrics_scrape import ASK_ROUTE, Scrape, grew, increments, scrape
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
BURST = 64
# Every label the project's metrics use; each takes values from a bounded set.
BOUNDED_LABELS = {
    "method",
    "route",
    "status",
    "grpc_service",
    "grpc_method",
    "grpc_code",
    "stop_reason",
    "model",
    "purpose",
    "outcome",
    "kind",
    "le",
}


@pytest.fixture(scope="module")
def service_metrics_url() -> Iterator[str]:
    """A service's metrics server, as ``run_service`` starts it, on a free port."""
    server = serve_metrics("127.0.0.1", 0)
    assert server is not None
    yield f"http://127.0.0.1:{server.port}/metrics"
    server.stop()


async def open_chat(client: httpx.AsyncClient) -> str:
    response = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
    assert response.status_code == 200, response.text
    return str(response.json()["data"])


async def test_one_question_counts_once_in_each_metric(stack: Stack, service_metrics_url: str) -> None:
    async with stack.http() as client:
        chat_id = await open_chat(client)
        gateway_before, service_before = await scrape(client, "/metrics"), await scrape(client, service_metrics_url)
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200 and frames[-1].data["is_end"] is True
        gateway_after, service_after = await scrape(client, "/metrics"), await scrape(client, service_metrics_url)

    for before, after in ((service_before, service_after), (gateway_before, gateway_after)):
        questions = increments(before, after, "kb_questions_total")
        assert list(questions.values()) == [1.0], questions
        labels = dict(next(iter(questions)))
        assert labels["status"] == "answered" and labels["stop_reason"] in STOP_REASON.names, labels
        assert grew(before, after, "kb_question_rounds_count") == 1
        assert 1 <= grew(before, after, "kb_question_rounds_sum") <= stack.settings.agent_max_rounds
        assert grew(before, after, "kb_question_evidence_paragraphs_count") == 1
    before, after = gateway_before, gateway_after
    assert grew(before, after, "kb_http_requests_total", method="POST", route=ASK_ROUTE, status="200") == 1
    # The Ask stream is counted once, at its end, with the status it ended with.
    ask_rpc = {"grpc_service": "kb.chat.v1.AnswerService", "grpc_method": "Ask"}
    assert grew(before, after, "kb_grpc_server_handled_total", **ask_rpc) == 1
    assert grew(before, after, "kb_grpc_server_handled_total", **ask_rpc, grpc_code="OK") == 1
    assert grew(before, after, "kb_grpc_server_handling_seconds_count", **ask_rpc) == 1
    # The offline model answered: one streamed answer counted once, however many chunks it had.
    chat_calls = {"model": OFFLINE_MODEL_NAME, "purpose": Purpose.CHAT}
    assert grew(before, after, "kb_model_calls_total", **chat_calls, outcome="ok") == 1
    assert grew(before, after, "kb_model_call_duration_seconds_count", **chat_calls) == 1
    assert grew(before, after, "kb_model_tokens_total", **chat_calls, kind="completion") > 0
    assert after.value("kb_http_sse_streams_active") == 0


async def test_no_label_takes_an_id_or_text(stack: Stack) -> None:
    """Two questions in two chats: no label value is a chat id, an application id or the
    question, and each label takes its values from a bounded set."""
    async with stack.http() as client:
        chats = [await open_chat(client), await open_chat(client)]
        for chat_id in chats:
            response, frames = await ask(client, chat_id, QUESTION)
            assert response.status_code == 200 and frames[-1].data["is_end"] is True
        found = await scrape(client, "/metrics")

    forbidden = {*chats, DEMO_APPLICATION_ID, QUESTION}
    names: set[str] = set()
    for sample in found.ours():
        names |= sample.labels.keys()
        for value in sample.labels.values():
            assert not any(secret in value for secret in forbidden), (sample.name, sample.labels)
        if sample.name.startswith("kb_questions_total"):
            assert sample.labels["stop_reason"] in {*STOP_REASON.names, "none"}, sample.labels
            assert sample.labels["status"] in RECORD_STATUS.names, sample.labels
        if sample.name.startswith("kb_model_calls_total"):
            assert sample.labels["purpose"] in {Purpose.CHAT, Purpose.AUXILIARY, Purpose.EMBEDDING, Purpose.RERANK}
            assert sample.labels["outcome"] in {"ok", "error", "cancelled"}
    assert names <= BOUNDED_LABELS, names - BOUNDED_LABELS
    routes = {s.labels["route"] for s in found.matching("kb_http_requests_total")}
    assert ASK_ROUTE in routes and not any(chat in route for route in routes for chat in chats), routes


async def test_a_scrape_during_a_burst_of_questions_answers(stack: Stack, service_metrics_url: str) -> None:
    """64 questions at once in 64 chats; scrapes of both endpoints while they run answer 200
    with the whole registry (the streams in flight among it), and afterwards every question is
    counted."""
    async with stack.http(limits=httpx.Limits(max_connections=2 * BURST)) as client:
        chats = await asyncio.gather(*(open_chat(client) for _ in range(BURST)))
        before = await scrape(client, "/metrics")
        burst = [asyncio.ensure_future(ask(client, chat_id, QUESTION)) for chat_id in chats]
        during: list[Scrape] = []
        while not all(task.done() for task in burst):
            during += [await scrape(client, "/metrics"), await scrape(client, service_metrics_url)]
            await asyncio.sleep(0.05)
        answers = await asyncio.gather(*burst)
        after = await scrape(client, "/metrics")

    assert all(r.status_code == 200 and frames[-1].data["is_end"] is True for r, frames in answers)
    assert during, "the burst ended before the first scrape"
    for found in during:
        assert {"kb_questions", "kb_http_requests", "kb_grpc_server_handled", "process_cpu_seconds"} <= found.families
    assert max(found.value("kb_http_sse_streams_active") for found in during) >= 1
    assert grew(before, after, "kb_questions_total") == BURST
    assert grew(before, after, "kb_question_rounds_count") == BURST
    assert after.value("kb_http_sse_streams_active") == 0


async def test_a_busy_chat_and_the_remote_model_calls_are_counted(remote_stack: Stack, fake_model: FakeOpenAI) -> None:
    """A question refused because its chat is answering (409) is a lease conflict; the remote
    model's calls are counted by model name and purpose, with the tokens the endpoint reported."""
    slow = ChatReply.stream(
        ["慢", "慢", "地", "答"], chunk_delay=0.3, usage={"prompt_tokens": 70, "completion_tokens": 4}
    )
    assessed = ChatReply(content='{"sufficient": true, "missing": "", "queries": []}', usage={"prompt_tokens": 50})
    fake_model.default = lambda body: slow if request_kind(body) == "generate" else assessed
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        before = await scrape(client, "/metrics")
        first = asyncio.ensure_future(ask(client, chat_id, QUESTION))
        await eventually(
            lambda: first.done() or any(request_kind(b) == "generate" for b in fake_model.chat_bodies),
            what="the first answer starting",
        )
        assert not first.done(), "the first question ended before its answer started"
        refused, _ = await ask(client, chat_id, "另一个问题")
        answered, frames = await first
        after = await scrape(client, "/metrics")

    assert refused.status_code == 409 and answered.status_code == 200 and frames[-1].data["is_end"] is True
    assert grew(before, after, "kb_chat_lease_conflicts_total") == 1
    assert grew(before, after, "kb_http_requests_total", route=ASK_ROUTE, status="409") == 1
    assert grew(before, after, "kb_questions_total") == 1  # the refused one never became a question
    chat = {"model": "fake-chat", "purpose": Purpose.CHAT}
    assert grew(before, after, "kb_model_calls_total", **chat, outcome="ok") == 1
    assert grew(before, after, "kb_model_tokens_total", **chat, kind="prompt") == 70
    assert grew(before, after, "kb_model_tokens_total", **chat, kind="completion") == 4
    assert grew(before, after, "kb_model_call_duration_seconds_sum", **chat) >= 0.9  # four chunks 0.3 s apart
    aux = {"model": "fake-chat", "purpose": Purpose.AUXILIARY}
    assert grew(before, after, "kb_model_calls_total", **aux, outcome="ok") >= 1
    assert grew(before, after, "kb_model_tokens_total", **aux, kind="prompt") == 50 * grew(
        before, after, "kb_model_calls_total", **aux
    )
