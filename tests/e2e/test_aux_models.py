"""Each application's auxiliary model: the rewrite, the assessment and the summaries of
compaction are made by the model the application chose (a registered endpoint), not by the
deployment's; two applications asking at the same time each reach only their own endpoint; an
auxiliary model deleted behind the application's back ends its question in a defined error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import delete

from kbcore.db.tables import ModelEndpoint
from tests.e2e.test_long_conversation import conversation
from tests.e2e.test_models_http import model_body, register
from tests.fakes.openai_server import ChatReply, FakeOpenAI, Json, request_kind
from tests.harness import Stack
from tests.services.context_support import Sessions, add_turns
from tests.sse_client import ask
from tools.seed_demo import DEMO_DATASET_ID

QUESTION_A = "ICU探视时间是几点？"
QUESTION_B = "城乡居民医保住院报销比例是多少？"
FOLLOW_UP = "节假日呢？"


def aux_route(tag: str) -> Any:
    """An auxiliary model whose rewrite and summary say which endpoint made them."""

    def route(body: Json) -> ChatReply:
        kind = request_kind(body)
        if kind == "assess":
            return ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []}))
        if kind == "rewrite":
            return ChatReply(content=f"{tag}改写：节假日ICU探视时间怎么安排？")
        if kind == "summarize":
            return ChatReply(content=f"{tag}摘要：用户问过青禾乡的预算。")
        return ChatReply.stream([f"{tag}不该回答"])  # the chat model is the deployment's (offline)

    return route


@pytest.fixture(scope="module")
def aux_a() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=aux_route("甲")) as server:
        yield server


@pytest.fixture(scope="module")
def aux_b() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=aux_route("乙")) as server:
        yield server


def prompts(fake: FakeOpenAI, kind: str) -> list[str]:
    """The user messages of the ``kind`` requests the fake received."""
    return [json.dumps(b["messages"], ensure_ascii=False) for b in fake.chat_bodies if request_kind(b) == kind]


async def aux_application(stack: Stack, name: str, aux_model_id: str, **extra: Any) -> str:
    body = {"name": name, "dataset_id_list": [DEMO_DATASET_ID], "model_setting": {"aux_model_id": aux_model_id}}
    async with stack.http() as operator:
        made = await operator.post("/api/application", json={**body, **extra})
    assert made.status_code == 200, made.text
    assert made.json()["data"]["model_setting"]["aux_model_id"] == aux_model_id
    return str(made.json()["data"]["id"])


async def follow_up(stack: Stack, sessions: Sessions, app_id: str, turns: list[tuple[str, str]]) -> dict[str, Any]:
    """A follow-up on a chat that already holds ``turns``: its record."""
    async with stack.http() as operator:
        chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        await add_turns(sessions, chat_id, turns)
        response, frames = await ask(operator, chat_id, FOLLOW_UP)
        assert response.status_code == 200, response.text
        assert frames[-1].kind != "error", frames[-1].data
        record_id = frames[-1].data["chat_record_id"]
        detail = await operator.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}")
    return dict(detail.json()["data"])


async def aux_models(stack: Stack, unique: str, aux_a: FakeOpenAI, aux_b: FakeOpenAI) -> tuple[str, str]:
    aux_a.reset()
    aux_b.reset()
    model_a = await register(stack, model_body(f"aux-甲-{unique}", aux_a.base_url, "sk-aux-a", purpose="auxiliary"))
    model_b = await register(stack, model_body(f"aux-乙-{unique}", aux_b.base_url, "sk-aux-b", purpose="auxiliary"))
    return str(model_a["id"]), str(model_b["id"])


async def test_two_applications_asking_at_once_each_reach_only_their_own_auxiliary_model(
    stack: Stack, sessions: Sessions, aux_a: FakeOpenAI, aux_b: FakeOpenAI, unique: str
) -> None:
    model_a, model_b = await aux_models(stack, unique, aux_a, aux_b)
    app_a = await aux_application(stack, f"aux-app-甲-{unique}", model_a)
    app_b = await aux_application(stack, f"aux-app-乙-{unique}", model_b)
    record_a, record_b = await asyncio.gather(
        follow_up(stack, sessions, app_a, [(QUESTION_A, "ICU每天16:00至16:30探视。")]),
        follow_up(stack, sessions, app_b, [(QUESTION_B, "县级定点医院报销80%。")]),
    )
    for record, tag in ((record_a, "甲"), (record_b, "乙")):
        assert record["padding_problem_text"] == f"{tag}改写：节假日ICU探视时间怎么安排？"
        assert record["agent_stop_reason"] == "sufficient", "the endpoint's assessment, not the offline one"
    mine = ((aux_a, QUESTION_A, QUESTION_B, "甲", "乙"), (aux_b, QUESTION_B, QUESTION_A, "乙", "甲"))
    for fake, own, other, tag, other_tag in mine:
        rewrites, assessments = prompts(fake, "rewrite"), prompts(fake, "assess")
        assert len(rewrites) == 1 and own in rewrites[0] and other not in rewrites[0]
        assert assessments and all(f"{tag}改写" in p and f"{other_tag}改写" not in p for p in assessments)
        assert not prompts(fake, "generate"), "the auxiliary model never answers"


async def test_compaction_of_a_long_chat_uses_the_applications_auxiliary_model(
    stack: Stack, sessions: Sessions, aux_a: FakeOpenAI, aux_b: FakeOpenAI, unique: str
) -> None:
    model_a, _ = await aux_models(stack, unique, aux_a, aux_b)
    app_a = await aux_application(stack, f"aux-long-{unique}", model_a, dialogue_number=2)
    record = await follow_up(stack, sessions, app_a, conversation())
    info = record["context_info"]
    assert info["compacted_rounds"] > 0, info
    summaries = prompts(aux_a, "summarize")
    assert summaries and "青禾乡" in summaries[0], "the oldest turns went to the application's model"
    assert not aux_b.chat_bodies, "the other application's model was never called"


async def test_an_auxiliary_model_deleted_after_the_check_ends_the_question_in_a_defined_error(
    stack: Stack, sessions: Sessions, aux_a: FakeOpenAI, aux_b: FakeOpenAI, unique: str
) -> None:
    model_a, _ = await aux_models(stack, unique, aux_a, aux_b)
    app_id = await aux_application(stack, f"aux-gone-{unique}", model_a)
    async with sessions.begin() as session:  # deletion is refused while in use: go around the check
        await session.execute(delete(ModelEndpoint).where(ModelEndpoint.id == model_a))
    async with stack.http() as operator:
        chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(operator, chat_id, QUESTION_A)
        assert response.status_code == 200, response.text
        assert frames[-1].kind == "error" and frames[-1].data["code"] == 404, frames[-1].data
        assert f"model {model_a} is not registered" in frames[-1].data["message"]
        page = await operator.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")
    (record,) = page.json()["data"]["records"]
    assert record["status"] == "failed" and "is not registered" in record["error"], record
    assert not aux_a.chat_bodies
