"""What a share-link visitor, an OpenAI client and an anonymous sign-in read when a backend is
down: a sentence in their language with an error id, never an address, grpc's own text or a
stack, in the stream, the saved record, the OpenAI error and the JSON envelope alike; the id is
the one of the log line that holds what grpc said, and the operator's log of the record carries
the cause (before: "（回答失败：后端服务不可用：上游服务出错：connections to all backends
failing; last error: UNKNOWN: ipv4:127.0.0.1:…: Failed to connect…）", stored in the record too,
and the sign-in's 503 named the address).

The outage is real: a chat service whose retrieval service is a closed port, behind a gateway of
its own; and a gateway whose chat service is a closed port."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kbcore.rpc.client import open_channel
from services.chat.server import ChatDeps, create_server
from tests.e2e.test_model_failure_words import application, bearer, visitor_token
from tests.harness import MAXKB_PAGE_LANGUAGE, Stack, another_gateway, http_client
from tests.sse_client import ask

pytestmark = pytest.mark.fault

QUESTION = "ICU探视时间是几点？"
ERROR_ID = re.compile(r"(?:error id|错误 ID) ([0-9a-f]{12})")
# What grpc says of a backend it cannot reach, in its own words: none of it may reach a reader.
TRANSPORT_WORDS = ("127.0.0.1", "ipv4", "failed to connect", "Failed to connect", "connections to all", "last error")
STATUS_NAMES = ("UNAVAILABLE", "UNKNOWN", "StatusCode")


def closed_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assert_no_transport_text(text: str, port: int) -> None:
    for words in (*TRANSPORT_WORDS, *STATUS_NAMES, f":{port}", "Traceback"):
        assert words not in text, (words, text)


def error_id(text: str) -> str:
    found = ERROR_ID.search(text)
    assert found, f"no error id in {text!r}"
    return found.group(1)


def logged_with(caplog: pytest.LogCaptureFixture, error_id: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if error_id in r.getMessage()]


@contextlib.asynccontextmanager
async def gateway_without_retrieval(stack: Stack) -> AsyncIterator[tuple[str, int]]:
    """A chat service on the stack's database and context service whose retrieval service is
    down (a closed port), and a gateway in front of it: its URL and the dead port."""
    port = closed_port()
    deps = ChatDeps(
        sessions=stack.chat_deps.sessions,
        model=stack.chat_deps.model,
        context_channel=open_channel(stack.context_target, stack.credential),
        retrieval_channel=open_channel(f"127.0.0.1:{port}", stack.credential),
    )
    chat = await create_server(stack.settings, deps, port=0)
    try:
        settings = dataclasses.replace(stack.settings, chat_target=f"127.0.0.1:{chat.port}")
        async with another_gateway(settings) as url:
            yield url, port
    finally:
        await chat.stop(grace=0)
        if deps.endpoints is not None:  # the stack's model and database are the stack's to close
            await deps.endpoints.aclose()
        await deps.context_channel.close()
        await deps.retrieval_channel.close()


async def test_a_visitors_stream_and_record_during_an_outage_carry_an_error_id_and_no_transport_text(
    stack: Stack, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    app_id = await application(stack, f"outage-{unique}", {})
    token = await visitor_token(stack, app_id)
    async with gateway_without_retrieval(stack) as (url, port):
        async with http_client(url, None, headers=bearer(token)) as visitor:
            chat_id = (await visitor.get(f"/api/application/{app_id}/chat/open")).json()["data"]
            response, frames = await ask(visitor, chat_id, QUESTION)
            assert response.status_code == 200, response.text
            failed = frames[-1]
            assert failed.kind == "error" and failed.data["code"] == 503, frames[-3:]
            assert not any(f.kind == "chunk" and f.data["is_end"] for f in frames)
            record = (await visitor.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()
        # The page MaxKB ships reads the default form, in Chinese: the failure is the last chunk's content.
        async with http_client(url, None, headers={**bearer(token), **MAXKB_PAGE_LANGUAGE}) as page:
            other_chat = (await page.get(f"/api/application/{app_id}/chat/open")).json()["data"]
            _, chinese = await ask(page, other_chat, QUESTION, progress="reasoning")
        async with http_client(url, stack.operator_token) as client:
            completion = await client.post(
                f"/api/application/{app_id}/chat/completions",
                json={"messages": [{"role": "user", "content": QUESTION}]},
            )
            log_page = (await client.get(f"/api/application/{app_id}/chat/1/20")).json()["data"]["records"]

    message = failed.data["message"]
    assert message.startswith("a backend service is unavailable: an upstream service failed (error id "), message
    [saved] = record["data"]["records"]
    assert saved["status"] == "failed" and error_id(saved["error"]) == error_id(message), saved
    assert saved["error"] == message.removeprefix("a backend service is unavailable: "), saved
    last = chinese[-1].data
    assert last["content"].startswith("（回答失败：后端服务不可用：上游服务出错（错误 ID "), last
    assert completion.status_code == 503, completion.text
    openai_error = completion.json()["error"]
    assert openai_error["type"] == "server_error" and "error id" in openai_error["message"], openai_error

    readable = [failed.raw.decode(), json.dumps(record, ensure_ascii=False), last["content"], completion.text]
    for text in readable:
        assert_no_transport_text(text, port)
        assert "error_detail" not in text, "the cause is the operator's"
    for text in (message, last["content"], openai_error["message"]):
        lines = logged_with(caplog, error_id(text))
        assert lines, f"the error id of {text!r} is in no log line"
        assert any("127.0.0.1" in r.getMessage() or "connect" in r.getMessage().lower() for r in lines), [
            r.getMessage() for r in lines
        ]

    [entry] = [r for r in log_page if r["chat_id"] == chat_id]
    assert entry["error"] == saved["error"]
    assert entry["error_detail"].startswith("upstream call UNAVAILABLE: "), entry["error_detail"]
    assert "Traceback" not in entry["error_detail"]


async def test_a_sign_in_with_the_chat_service_down_is_503_with_an_error_id_not_its_address(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    port = closed_port()
    settings = dataclasses.replace(stack.settings, chat_target=f"127.0.0.1:{port}")
    async with another_gateway(settings) as url:
        async with http_client(url, None, headers=MAXKB_PAGE_LANGUAGE) as anonymous:
            chinese = await anonymous.post("/api/application/authentication", json={"access_token": "a" * 32})
        async with http_client(url, None) as anonymous:
            english = await anonymous.post("/api/application/authentication", json={"access_token": "a" * 32})
    for response in (chinese, english):
        assert response.status_code == 503, response.text
        assert_no_transport_text(response.text, port)
        body = response.json()
        assert body["code"] == 503 and body["data"] is None, body
        lines = logged_with(caplog, error_id(body["message"]))
        assert any(f":{port}" in r.getMessage() for r in lines), "the log line holds what grpc said"
    assert chinese.json()["message"].startswith("后端服务不可用（错误 ID "), chinese.text
    assert english.json()["message"].startswith("a backend service is unavailable (error id "), english.text


async def test_a_fault_of_the_gateways_own_is_the_routes_shape_with_an_error_id(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An exception no route expected: MaxKB's envelope (OpenAI's error on its routes) with an
    error id, not the framework's plain "Internal Server Error" nor the exception's words."""
    from gateway.openai import routes as openai_routes
    from gateway.routes import applications

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret-internal-words at 10.0.0.5:5432")

    monkeypatch.setattr(applications, "application_out", broken)
    monkeypatch.setattr(openai_routes, "model_json", broken)
    async with stack.http() as client:
        envelope = await client.get("/api/application")
        models = await client.get("/v1/models")
    assert envelope.status_code == 500 and envelope.json()["code"] == 500, envelope.text
    assert models.status_code == 500 and models.json()["error"]["type"] == "server_error", models.text
    for response, message in ((envelope, envelope.json()["message"]), (models, models.json()["error"]["message"])):
        assert "secret" not in response.text and "10.0.0.5" not in response.text, response.text
        assert message.startswith("internal error (error id "), message
        lines = logged_with(caplog, error_id(message))
        assert lines and lines[0].exc_info is not None, "logged with its traceback"
