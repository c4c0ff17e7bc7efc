"""Through the whole stack: with the defaults (thinking disabled on
auxiliary calls, the provider detected as generic, so ``thinking: {type: disabled}`` is sent)
and an endpoint that refuses unknown fields the way api.openai.com does, a compound question
still gets a real assessment, a follow-up is really rewritten and a long chat is really
compacted — because the refused field is dropped after the first 400 and never sent again."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kbcore.models.providers import detect_provider
from tests.e2e.conftest import route
from tests.e2e.test_long_conversation import FOLLOW_UP as LONG_FOLLOW_UP
from tests.e2e.test_long_conversation import conversation
from tests.e2e.test_remote_model import QUESTION
from tests.fakes.openai_server import FakeOpenAI, request_kind
from tests.fakes.providers import FakeStrictOpenAI
from tests.harness import Stack
from tests.services.context_support import Sessions, add_turns
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

REWRITTEN = "云岭县人民医院ICU探视时间如果遇到节假日怎么安排？"  # what ``route`` rewrites to


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAI]:
    """``remote_stack``'s endpoint, for this module: OpenAI's refusal of unknown fields."""
    with FakeStrictOpenAI(default=route) as server:
        yield server


async def asked(client: httpx.AsyncClient, app_id: str, chat_id: str, question: str) -> dict[str, Any]:
    """The record of ``question`` asked on the chat."""
    response, frames = await ask(client, chat_id, question)
    assert response.status_code == 200, response.text
    assert frames[-1].kind != "error", frames[-1].data
    record_id = frames[-1].data["chat_record_id"]
    detail = await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}")
    return dict(detail.json()["data"])


async def test_defaults_on_an_openai_like_endpoint_assess_rewrite_and_compact_after_one_refusal(
    remote_stack: Stack, fake_model: FakeOpenAI, sessions: Sessions, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    assert remote_stack.settings.disable_thinking is True and detect_provider(fake_model.base_url) == "generic"
    async with remote_stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        first = await asked(client, DEMO_APPLICATION_ID, chat_id, QUESTION)
        assert first["agent_stop_reason"] == "sufficient", "the endpoint's assessment, not assessment_error"
        assert first["sufficient"] is True
        follow_up = await asked(client, DEMO_APPLICATION_ID, chat_id, "节假日呢？")
        assert follow_up["padding_problem_text"] == REWRITTEN, "the rewrite ran, no fallback to the raw question"
        assert follow_up["agent_stop_reason"] == "sufficient"

        made = await client.post(
            "/api/application",
            json={"name": "严格端点长会话", "dataset_id_list": [DEMO_DATASET_ID], "dialogue_number": 2},
        )
        long_app = made.json()["data"]["id"]
        long_chat = (await client.get(f"/api/application/{long_app}/chat/open")).json()["data"]
        await add_turns(sessions, long_chat, conversation())
        long = await asked(client, long_app, long_chat, LONG_FOLLOW_UP)
        assert long["context_info"]["compacted_rounds"] > 0, long["context_info"]

    bodies = fake_model.chat_bodies
    kinds = [request_kind(b) for b in bodies]
    assert {"assess", "rewrite", "summarize", "generate"} <= set(kinds), kinds
    assert fake_model.refusals == 1, "refused once, then remembered for every later call of this client"
    refused, retried = bodies[0], bodies[1]
    assert request_kind(refused) == request_kind(retried) == "assess"
    assert refused["thinking"] == {"type": "disabled"} and "thinking" not in retried
    assert all("thinking" not in b for b in bodies[1:]), "never sent again"
    warnings = [r.getMessage() for r in caplog.records if "refused thinking" in r.getMessage()]
    assert len(warnings) == 1, warnings
