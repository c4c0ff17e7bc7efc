"""The remote-model path: the services use the official openai client against a real local
HTTP server speaking the OpenAI protocol (tests/fakes), through the whole HTTP stack."""

from __future__ import annotations

from typing import Any

from kbcore.models.failures import SENTENCES, FailureKind
from tests.e2e.conftest import ANSWER_CHUNKS, route
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import Stack
from tests.sse_client import answer_text, ask
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？城乡居民医保参保人在县级定点医院住院，报销比例是多少？"


async def test_answer_streams_from_the_remote_model_with_the_evidence_prompt(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    async with remote_stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200
        assert answer_text(frames) == "".join(ANSWER_CHUNKS)
        assert frames[-1].data["is_end"] is True

        bodies = fake_model.chat_bodies
        kinds = [request_kind(b) for b in bodies]
        assert kinds == ["assess", "generate"], "no history: no rewrite; one assessment; one generation"
        assess, generate = bodies
        assert assess["temperature"] == 0 and assess["response_format"] == {"type": "json_object"}
        assert assess["thinking"] == {"type": "disabled"}, "auxiliary calls turn reasoning off"
        assert "stream" not in assess and assess["max_tokens"] == 900
        assert generate["stream"] is True and generate["model"] == "fake-chat"
        system, user = generate["messages"][0]["content"], generate["messages"][-1]["content"]
        assert "检索是否充分：true" in system and "停止原因：sufficient" in system and "不得编造" in system
        assert '<paragraph id="' in user and 'document="云岭县' in user and "</paragraph>" in user
        assert QUESTION in user and "证据核验指出的资料缺口" in user

        record_id = frames[-1].data["chat_record_id"]
        record = (
            await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/{record_id}")
        ).json()["data"]
        assert record["chat_step"]["model"] == "fake-chat" and record["chat_step"]["offline_model"] is False
        assert record["agent_stop_reason"] == "sufficient" and record["sufficient"] is True

        # A follow-up: history exists now, so the question is rewritten first (temperature 0, ≤512 tokens).
        fake_model.reset()
        await ask(client, chat_id, "节假日呢？")
        rewrite = next(b for b in fake_model.chat_bodies if request_kind(b) == "rewrite")
        assert rewrite["temperature"] == 0 and rewrite["max_tokens"] == 512
        assert rewrite["thinking"] == {"type": "disabled"}
        assert "ICU" in rewrite["messages"][-1]["content"], "the history travels with the rewrite request"
        generate = next(b for b in fake_model.chat_bodies if request_kind(b) == "generate")
        roles = [m["role"] for m in generate["messages"]]
        assert roles == ["system", "user", "assistant", "user"], "history in order before the current prompt"
        assert generate["messages"][2]["content"] == "".join(ANSWER_CHUNKS)


async def test_model_failure_becomes_an_error_event_and_a_failed_record(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    def failing(body: dict[str, Any]) -> ChatReply:
        return route(body) if request_kind(body) != "generate" else ChatReply.error(500, "model overloaded")

    fake_model.default = failing
    async with remote_stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200
        assert frames[-1].kind == "error", "the stream ends with event:error"
        assert frames[-1].data["code"] == 503 and "model" in frames[-1].data["message"]
        assert not any(f.kind == "chunk" and f.data["is_end"] for f in frames)
        page = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()[
            "data"
        ]
        (record,) = page["records"]
        # the kind of failure, not the endpoint's own words (those are in the service log, under the error id)
        assert record["status"] == "failed", record
        assert record["error"].startswith(f"{SENTENCES[FailureKind.UNAVAILABLE]} (error id "), record["error"]
        assert record["agent_trace"], "the retrieval trace is kept even though generation failed"
