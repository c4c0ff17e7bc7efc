"""Optional rerank per application: with a rerank model chosen, each round's candidates
reach the evidence in the fake reranker's order and the record's trace shows its scores; without
one the reranker is never called; a reranker that does not answer leaves the search order and
says so in the round's trace, the question still answered; only a rerank model can be chosen."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from kbcore.models.failures import SENTENCES, FailureKind
from tests.fakes.reranker import FakeReranker
from tests.harness import Stack
from tests.sse_client import answer_text, ask
from tools.seed_demo import DEMO_DATASET_ID

QUESTION = "ICU探视时间是几点？"
TOP_N = 3


@pytest.fixture(scope="module")
def reranker() -> Iterator[FakeReranker]:
    with FakeReranker() as server:
        yield server


async def register_model(stack: Stack, name: str, base_url: str, purpose: str = "rerank") -> str:
    body = {
        "name": name,
        "provider": "vllm",
        "model_name": "fake-reranker",
        "purpose": purpose,
        "credential": {"api_base": base_url, "api_key": "sk-rerank-key-9999"},
    }
    async with stack.http() as operator:
        made = await operator.post("/api/model", json=body)
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["id"])


def app_body(name: str, rerank_model_id: str = "") -> dict[str, Any]:
    return {
        "name": name,
        "dataset_id_list": [DEMO_DATASET_ID],
        "dataset_setting": {"top_n": TOP_N, "similarity": 0.0, "search_mode": "hybrid"},
        "model_setting": {"rerank_model_id": rerank_model_id},
    }


async def application(stack: Stack, name: str, rerank_model_id: str = "") -> str:
    async with stack.http() as operator:
        made = await operator.post("/api/application", json=app_body(name, rerank_model_id))
    assert made.status_code == 200, made.text
    assert made.json()["data"]["model_setting"]["rerank_model_id"] == rerank_model_id
    return str(made.json()["data"]["id"])


async def asked_record(stack: Stack, app_id: str) -> dict[str, Any]:
    """Ask QUESTION in a new chat; the saved record (answered) with its trace."""
    async with stack.http() as operator:
        chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(operator, chat_id, QUESTION)
        assert response.status_code == 200, response.text
        assert answer_text(frames)
        page = (await operator.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
    record = dict(page["records"][-1])
    assert record["status"] == "answered", record
    return record


def as_sent(paragraph: dict[str, Any]) -> str:
    """A paragraph as the reranker reads it (title over content)."""
    return f"{paragraph['title']}\n{paragraph['content']}" if paragraph["title"] else paragraph["content"]


def first_round(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in record["paragraph_list"] if p["round"] == 1]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_rerank_on_the_evidence_is_in_the_rerankers_order_and_the_trace_shows_its_scores(
    stack: Stack, reranker: FakeReranker, unique: str
) -> None:
    reranker.reset()
    model_id = await register_model(stack, f"reranker-{unique}", reranker.base_url)
    record = await asked_record(stack, await application(stack, f"reranked-{unique}", model_id))
    first = reranker.requests[0]
    assert first["query"] == QUESTION and first["model"] == "fake-reranker"
    assert first["authorization"] == "Bearer sk-rerank-key-9999"
    candidates = first["documents"]
    assert len(candidates) > TOP_N, "the reranker chooses among more candidates than are kept"
    # The fake scores later candidates higher: its order is the search's, reversed.
    expected = list(reversed(candidates))[:TOP_N]
    round_one = first_round(record)
    assert [as_sent(p) for p in round_one] == expected
    n = len(candidates)
    assert [p["rerank_score"] for p in round_one] == [round((n - i) / n, 4) for i in range(TOP_N)]
    assert record["agent_trace"][0]["reranked"] is True
    assert record["agent_trace"][0]["rerank_error"] == ""


async def test_rerank_off_the_reranker_is_never_called_and_the_wire_has_no_rerank_fields(
    stack: Stack, reranker: FakeReranker, unique: str
) -> None:
    reranker.reset()
    await register_model(stack, f"unused-reranker-{unique}", reranker.base_url)
    record = await asked_record(stack, await application(stack, f"plain-{unique}"))
    assert reranker.requests == []
    assert record["paragraph_list"] and all("rerank_score" not in p for p in record["paragraph_list"])
    assert all("reranked" not in r and "rerank_error" not in r for r in record["agent_trace"])


async def test_a_reranker_that_does_not_answer_keeps_the_search_order_and_the_trace_says_so(
    stack: Stack, unique: str
) -> None:
    down = await register_model(stack, f"down-reranker-{unique}", f"http://127.0.0.1:{closed_port()}/v1")
    reranked = await asked_record(stack, await application(stack, f"down-{unique}", down))
    plain = await asked_record(stack, await application(stack, f"baseline-{unique}"))
    assert [p["id"] for p in first_round(reranked)] == [p["id"] for p in first_round(plain)]
    assert all("rerank_score" not in p for p in reranked["paragraph_list"])
    trace = reranked["agent_trace"][0]
    assert trace["reranked"] is False
    # the record is a visitor's to read: the kind of failure, not the endpoint's address (that is logged)
    assert trace["rerank_error"] == str(SENTENCES[FailureKind.UNAVAILABLE])


async def test_a_reranker_answering_an_error_status_keeps_the_order_and_names_the_status(
    stack: Stack, reranker: FakeReranker, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    reranker.reset()
    reranker.status = 500
    model_id = await register_model(stack, f"failing-reranker-{unique}", reranker.base_url)
    record = await asked_record(stack, await application(stack, f"failing-{unique}", model_id))
    assert reranker.requests, "the reranker was asked"
    assert record["agent_trace"][0]["rerank_error"] == str(SENTENCES[FailureKind.UNAVAILABLE])
    assert "answered HTTP 500" in caplog.text, "the status is the operator's, in the log"
    assert len(first_round(record)) <= TOP_N
    reranker.reset()


async def test_only_a_registered_rerank_model_can_be_an_applications_reranker(
    stack: Stack, reranker: FakeReranker, unique: str
) -> None:
    chat_model = await register_model(stack, f"chat-not-reranker-{unique}", reranker.base_url, purpose="chat")
    async with stack.http() as operator:
        wrong = await operator.post("/api/application", json=app_body(f"wrong-{unique}", chat_model))
        unknown = await operator.post("/api/application", json=app_body(f"unknown-{unique}", "no-such-model"))
        app_id = await application(stack, f"later-{unique}")
        edited = await operator.put(f"/api/application/{app_id}", json=app_body(f"later-{unique}", chat_model))
    for response in (wrong, unknown, edited):
        assert response.status_code == 400, response.text
    assert "rerank_model_id" in wrong.text and "chat model" in wrong.text and "rerank" in wrong.text
    assert "not registered" in unknown.text
