"""Models as data over HTTP (MaxKB v1's ``/api/model`` routes): two applications on
two registered models answer concurrently, each from its own endpoint; an API key saved through
the API is never read back (routes, CSV export, logs) and is ciphertext in its row; a check
reports a refused key, an endpoint that does not answer and an unknown model in words; a model
in use cannot be deleted; bad input is a clear 4xx."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ModelEndpoint
from kbcore.secret_box import SecretBox
from tests.fakes.openai_server import ChatReply, FakeOpenAI, plausible_route, request_kind
from tests.harness import Stack
from tests.sse_client import answer_text, ask

QUESTION = "ICU探视时间是几点？"


@pytest.fixture(scope="module")
def fake_a() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=plausible_route(lambda: ChatReply.stream(["来自模型A的回答"]))) as server:
        yield server


@pytest.fixture(scope="module")
def fake_b() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=plausible_route(lambda: ChatReply.stream(["来自模型B的回答"]))) as server:
        yield server


def model_body(name: str, base_url: str, api_key: str = "", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "provider": "vllm",
        "model_name": "fake-chat",
        "purpose": "chat",
        "credential": {"api_base": base_url, "api_key": api_key},
        **extra,
    }


async def register(stack: Stack, body: dict[str, Any]) -> dict[str, Any]:
    async with stack.http() as operator:
        made = await operator.post("/api/model", json=body)
    assert made.status_code == 200, made.text
    return dict(made.json()["data"])


async def application_on(stack: Stack, name: str, chat_model_id: str) -> str:
    body = {"name": name, "dataset_id_list": [], "model_setting": {"chat_model_id": chat_model_id}}
    async with stack.http() as operator:
        made = await operator.post("/api/application", json=body)
    assert made.status_code == 200, made.text
    assert made.json()["data"]["model_setting"]["chat_model_id"] == chat_model_id
    return str(made.json()["data"]["id"])


async def ask_once(stack: Stack, app_id: str) -> str:
    async with stack.http() as operator:
        chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(operator, chat_id, QUESTION)
    assert response.status_code == 200, response.text
    return answer_text(frames)


def generations(fake: FakeOpenAI) -> list[Any]:
    return [r for r in fake.requests if r.path.endswith("/chat/completions") and request_kind(r.body) == "generate"]


async def test_two_applications_on_two_models_answer_concurrently_each_from_its_own(
    stack: Stack, fake_a: FakeOpenAI, fake_b: FakeOpenAI, unique: str
) -> None:
    fake_a.reset()
    fake_b.reset()
    model_a = await register(stack, model_body(f"A-{unique}", fake_a.base_url, "sk-key-of-A-1111"))
    model_b = await register(stack, model_body(f"B-{unique}", fake_b.base_url, "sk-key-of-B-2222"))
    app_a = await application_on(stack, f"on-A-{unique}", model_a["id"])
    app_b = await application_on(stack, f"on-B-{unique}", model_b["id"])
    answers = await asyncio.gather(*(ask_once(stack, a) for a in (app_a, app_b, app_a, app_b)))
    assert answers == ["来自模型A的回答", "来自模型B的回答"] * 2
    for fake, key in ((fake_a, "sk-key-of-A-1111"), (fake_b, "sk-key-of-B-2222")):
        received = generations(fake)
        assert len(received) == 2
        assert all(r.headers["authorization"] == f"Bearer {key}" for r in received)
        assert all(r.body["model"] == "fake-chat" for r in received)


async def test_an_api_key_is_never_read_back_and_its_row_holds_ciphertext(
    stack: Stack,
    fake_a: FakeOpenAI,
    sessions: async_sessionmaker[AsyncSession],
    caplog: pytest.LogCaptureFixture,
    unique: str,
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = f"sk-never-shown-{unique}-a1b2"
    model = await register(stack, model_body(f"secret-{unique}", fake_a.base_url, secret))
    assert model["key_hint"] == "…a1b2"
    app_id = await application_on(stack, f"secret-app-{unique}", model["id"])
    await ask_once(stack, app_id)
    async with stack.http() as operator:
        seen = [
            await operator.get("/api/model"),
            await operator.get("/api/model", params={"purpose": "chat"}),
            await operator.put(f"/api/model/{model['id']}", json={"name": f"secret-renamed-{unique}"}),
            await operator.post(f"/api/model/{model['id']}/check"),
            await operator.get(f"/api/application/{app_id}"),
            await operator.post(f"/api/application/{app_id}/chat/export", json={}),
        ]
    assert all(r.status_code == 200 for r in seen), [r.text for r in seen]
    assert seen[3].json()["data"]["ok"] is True
    for response in seen:
        assert secret not in response.text and unique + "-a1b2" not in response.text
    assert next(m for m in seen[0].json()["data"] if m["id"] == model["id"])["application_ids"] == [app_id]
    assert secret not in caplog.text
    async with sessions() as session:
        row = (await session.scalars(select(ModelEndpoint).where(ModelEndpoint.id == model["id"]))).one()
    assert secret not in row.api_key_sealed and row.api_key_sealed
    assert SecretBox.from_settings(stack.settings).open(row.api_key_sealed) == secret
    assert [r.headers["authorization"] for r in generations(fake_a)][-1] == f"Bearer {secret}"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def check(stack: Stack, body: dict[str, Any]) -> dict[str, Any]:
    model = await register(stack, body)
    async with stack.http() as operator:
        checked = await operator.post(f"/api/model/{model['id']}/check")
    assert checked.status_code == 200, checked.text
    return dict(checked.json()["data"])


async def test_a_check_says_in_words_what_the_endpoint_did(stack: Stack, unique: str) -> None:
    key = f"sk-refused-{unique}"
    with FakeOpenAI(default=ChatReply.error(401, f"Incorrect API key provided: {key}")) as refusing:
        refused = await check(stack, model_body(f"refused-{unique}", refusing.base_url, key))
    assert refused == {"ok": False, "message": refused["message"]}
    assert "the API key was refused" in refused["message"] and key not in refused["message"]
    port = closed_port()
    silent = await check(stack, model_body(f"silent-{unique}", f"http://127.0.0.1:{port}/v1", "k"))
    assert silent["ok"] is False and silent["message"] == f"no answer from 127.0.0.1:{port}"
    with FakeOpenAI(default=ChatReply.error(404, "The model `no-such-model` does not exist")) as unknown:
        missing = await check(stack, model_body(f"missing-{unique}", unknown.base_url, "k", model_name="no-such-model"))
    assert missing["ok"] is False and "The model `no-such-model` does not exist" in missing["message"]


async def test_a_model_in_use_cannot_be_deleted_and_bad_input_is_a_clear_4xx(
    stack: Stack, fake_a: FakeOpenAI, unique: str
) -> None:
    model = await register(stack, model_body(f"used-{unique}", fake_a.base_url))
    app_id = await application_on(stack, f"uses-{unique}", model["id"])
    async with stack.http() as operator:
        refused = await operator.delete(f"/api/model/{model['id']}")
        assert refused.status_code == 409 and "used by 1 application" in refused.json()["message"], refused.text
        assert app_id in refused.json()["message"]
        same_name = await operator.post("/api/model", json=model_body(f"used-{unique}", fake_a.base_url))
        assert same_name.status_code == 409 and "already exists" in same_name.json()["message"]
        bad_url = await operator.post("/api/model", json=model_body(f"bad-{unique}", "ftp://x"))
        assert bad_url.status_code == 400 and "base_url must be an http(s) URL" in bad_url.json()["message"]
        bad_kind = await operator.post("/api/model", json=model_body(f"bad-{unique}", fake_a.base_url, provider="x"))
        assert bad_kind.status_code == 400
        unknown = {"name": f"bad-app-{unique}", "model_setting": {"chat_model_id": "no-such-id"}}
        no_model = await operator.post("/api/application", json=unknown)
        assert no_model.status_code == 400 and "is not registered" in no_model.json()["message"]
        detached = await operator.put(f"/api/application/{app_id}", json={"name": f"uses-{unique}"})
        assert detached.status_code == 200, detached.text
        deleted = await operator.delete(f"/api/model/{model['id']}")
        assert deleted.status_code == 200, deleted.text
        gone = await operator.delete(f"/api/model/{model['id']}")
        assert gone.status_code == 404
