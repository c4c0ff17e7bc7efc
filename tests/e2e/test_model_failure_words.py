"""A model endpoint that refuses (401 echoing the start of the key), errs (500 with its own text)
or is down (a closed port) is told to callers in one fixed sentence per kind of failure, the same
on every surface: a share-link visitor's SSE ``event:error`` and record, both CSV exports and the
OpenAI-compatible route's error object. None of them holds the endpoint's words, its host or
port, the connection error or any part of the key; the service log has what happened, scrubbed.
The auxiliary model's failures (the rewrite of a follow-up) reach the record the same way."""

from __future__ import annotations

import csv
import io
import json
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from kbcore.models.failures import SENTENCES, FailureKind
from kbcore.words.said import Said
from tests.e2e.test_models_http import model_body, register
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_DATASET_ID

QUESTION = "ICU探视时间是几点？"
FOLLOW_UP = "节假日呢？"
KEY_PREFIX = "sk-abc"
KEY = KEY_PREFIX + "7Q2x9LmN4pR8sT1vW3yZ5bD6wxyz"
# What api.openai.com answers a wrong key with: the key's start and end, masked in between.
ECHO = (
    f"Incorrect API key provided: {KEY_PREFIX}{'*' * 20}wxyz. "
    "You can find your API key at https://platform.openai.com/account/api-keys."
)
CRASH = "CUDA error on worker gpu-node-7: out of memory"


@dataclass(frozen=True)
class Failing:
    """A failing endpoint: where it is, what a caller must read, what must never reach a caller
    (but the log), and what the log must say."""

    base_url: str
    sentence: Said
    hidden: tuple[str, ...]
    logged: tuple[str, ...]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def refusing() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=ChatReply.error(401, ECHO)) as server:
        yield server


@pytest.fixture(scope="module")
def erring() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=ChatReply.error(500, CRASH)) as server:
        yield server


@pytest.fixture(params=["refused", "erring", "down"])
def failing(request: pytest.FixtureRequest, refusing: FakeOpenAI, erring: FakeOpenAI) -> Failing:
    if request.param == "refused":
        refusing.reset()
        return Failing(
            refusing.base_url,
            SENTENCES[FailureKind.REFUSED],
            ("Incorrect API key", f":{refusing.port}"),
            ("HTTP 401", "Incorrect API key provided: ***"),
        )
    if request.param == "erring":
        erring.reset()
        return Failing(
            erring.base_url, SENTENCES[FailureKind.UNAVAILABLE], (CRASH, f":{erring.port}"), ("HTTP 500", CRASH)
        )
    port = closed_port()
    return Failing(
        f"http://127.0.0.1:{port}/v1",
        SENTENCES[FailureKind.UNAVAILABLE],
        ("Cannot connect", "Connect call failed", f":{port}"),
        (f"Cannot connect to host 127.0.0.1:{port}",),
    )


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def application(stack: Stack, name: str, model_setting: dict[str, str]) -> str:
    body = {"name": name, "dataset_id_list": [DEMO_DATASET_ID], "model_setting": model_setting}
    async with stack.http() as operator:
        made = await operator.post("/api/application", json=body)
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["id"])


async def visitor_token(stack: Stack, app_id: str) -> str:
    """A share link's visitor, signed in."""
    async with stack.http() as operator:
        link = await operator.post(f"/api/application/{app_id}/access_token", json={"access_num": 100})
    async with stack.http() as anonymous:
        signed_in = await anonymous.post(
            "/api/application/authentication", json={"access_token": link.json()["data"]["access_token"]}
        )
    assert signed_in.status_code == 200, signed_in.text
    return str(signed_in.json()["data"])


def csv_rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode("utf-8-sig"))))


def assert_tells_nothing(text: str, failing: Failing) -> None:
    for secret in (KEY, KEY_PREFIX, "127.0.0.1", *failing.hidden):
        assert secret not in text, (secret, text)


async def test_a_failing_chat_model_is_one_sentence_on_every_surface_and_the_detail_only_in_the_log(
    stack: Stack, failing: Failing, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    model = await register(stack, model_body(f"failing-{unique}", failing.base_url, KEY))
    app_id = await application(stack, f"on-failing-{unique}", {"chat_model_id": model["id"]})

    async with stack.http(headers=bearer(await visitor_token(stack, app_id))) as visitor:
        chat_id = (await visitor.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(visitor, chat_id, QUESTION)
        assert response.status_code == 200, response.text
        error = frames[-1]
        assert error.kind == "error" and error.data["code"] == 503, frames[-1]
        assert str(failing.sentence) in error.data["message"]
        page = await visitor.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")
    (record,) = page.json()["data"]["records"]
    assert record["status"] == "failed" and record["error"].startswith(f"{failing.sentence} (error id "), record
    # The error id leads to the service log's line with what the endpoint said.
    error_id = record["error"].split("(error id ")[1][:12]
    assert error_id in error.data["message"], error.data
    assert any(error_id in r.getMessage() and failing.logged[0] in r.getMessage() for r in caplog.records)

    async with stack.http() as operator:
        exported = await operator.get(f"/api/application/{app_id}/chat/export")
        log_export = await operator.post(f"/api/application/{app_id}/chat/export", params={"format": "csv"}, json={})
        completion = await operator.post(
            "/v1/chat/completions", json={"model": app_id, "messages": [{"role": "user", "content": QUESTION}]}
        )
    assert exported.status_code == 200 and log_export.status_code == 200, (exported.text, log_export.text)
    for content in (exported.content, log_export.content):
        (row,) = [r for r in csv_rows(content) if r["chat_id"] == chat_id]
        assert row["error"] == record["error"] and row["status"] == "failed", row
    assert completion.status_code == 503, completion.text
    assert str(failing.sentence) in completion.json()["error"]["message"]

    surfaces = [error.raw.decode(), page.text, exported.content.decode(), log_export.content.decode(), completion.text]
    for text in surfaces:
        assert_tells_nothing(text, failing)
    for words in failing.logged:
        assert words in caplog.text, words
    assert KEY not in caplog.text and KEY_PREFIX not in caplog.text


async def test_a_failing_auxiliary_model_leaves_its_sentence_in_the_record_not_its_words(
    stack: Stack, refusing: FakeOpenAI, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    refusing.reset()  # every rewrite and assessment is refused (401, echoing the key)
    failing = Failing(refusing.base_url, SENTENCES[FailureKind.REFUSED], ("Incorrect API key",), ())
    model = await register(stack, model_body(f"aux-{unique}", refusing.base_url, KEY))
    app_id = await application(stack, f"on-aux-{unique}", {"aux_model_id": model["id"]})

    async with stack.http(headers=bearer(await visitor_token(stack, app_id))) as visitor:
        chat_id = (await visitor.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        for question in (QUESTION, FOLLOW_UP):
            response, frames = await ask(visitor, chat_id, question)
            assert response.status_code == 200 and frames[-1].kind == "chunk", frames[-1]
        page = await visitor.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")
    records: list[dict[str, Any]] = page.json()["data"]["records"]
    kinds = [request_kind(b) for b in refusing.chat_bodies]
    assert "rewrite" in kinds and "assess" in kinds and "generate" not in kinds, kinds
    follow_up = next(r for r in records if r["problem_text"] == FOLLOW_UP)
    assert follow_up["status"] == "answered" and follow_up["rewrite_error"] == str(failing.sentence), follow_up
    assert all(r["agent_stop_reason"] == "assessment_error" for r in records)
    assert_tells_nothing(json.dumps(records, ensure_ascii=False), failing)
    assert "rewrite: the model endpoint answered HTTP 401: Incorrect API key provided: ***" in caplog.text
    assert KEY_PREFIX not in caplog.text
