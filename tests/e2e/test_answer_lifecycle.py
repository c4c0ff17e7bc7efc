"""The answer's life: saved before is_end, busy chats refused, a client that leaves stops the
model stream and keeps the partial answer."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from kbcore.models.failures import SENTENCES, FailureKind
from kbcore.rpc.stubs import ChatStubs
from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import Stack
from tests.sse_client import ask, parse_frames
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"


async def open_chat(client) -> str:
    return str((await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"])


async def test_a_follow_up_sent_the_moment_is_end_arrives_sees_the_answer(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        _, frames = await ask(client, chat_id, QUESTION)
        assert frames[-1].data["is_end"] is True
        fake_model.reset()
        await ask(client, chat_id, "节假日呢？")  # sent right after the previous stream ended
        generate = next(b for b in fake_model.chat_bodies if request_kind(b) == "generate")
        history = [m for m in generate["messages"][1:-1]]
        assert [m["role"] for m in history] == ["user", "assistant"]
        assert history[0]["content"] == QUESTION
        assert history[1]["content"].startswith("ICU每天探视时间为16:00至16:30")


async def test_a_second_question_on_a_busy_chat_is_refused_with_409(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    slow = ChatReply.stream(["慢", "慢", "地", "答"], chunk_delay=0.3)
    fake_model.default = lambda body: slow if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        first = asyncio.create_task(ask(client, chat_id, QUESTION))
        await eventually(
            lambda: any(request_kind(b) == "generate" for b in fake_model.chat_bodies), what="the answer's model call"
        )
        response, _ = await ask(client, chat_id, "另一个问题")
        assert response.status_code == 409
        body = response.json()
        assert body["code"] == 409 and "already answering" in body["message"]
        first_response, frames = await first
        assert first_response.status_code == 200 and frames[-1].data["is_end"] is True
        again, frames = await ask(client, chat_id, "另一个问题")
        assert again.status_code == 200, "after the first answer ends, the next question runs"


async def test_a_client_that_disconnects_stops_the_model_stream_and_keeps_the_partial_answer(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    fake_model.default = lambda body: (
        ChatReply.hang(["已经生成的", "部分回答"]) if request_kind(body) == "generate" else _assess_ok()
    )
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        received = b""
        async with client.stream(
            "POST", f"/api/application/chat_message/{chat_id}", json={"message": QUESTION}
        ) as response:
            async for piece in response.aiter_bytes():
                received += piece
                if "部分回答".encode() in received:
                    break  # the browser goes away mid-answer
        left = time.monotonic()
        assert await asyncio.to_thread(fake_model.wait_for_cancelled_stream, 5.0)
        assert time.monotonic() - left < 1.0, "the model stream must stop within a second"
        record = await _finished_record(client, chat_id)
        assert record["status"] == "stopped"
        assert record["answer_text"] == "已经生成的部分回答"
        assert record["agent_trace"], "the trace is saved with the partial answer"


def _assess_ok() -> ChatReply:
    return ChatReply(content='{"sufficient": true, "missing": "", "queries": []}')


async def _finished_record(client, chat_id: str) -> dict[str, Any]:
    """The chat's last record once it is no longer running."""

    async def last_record() -> dict[str, Any]:
        url = f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10"
        records = (await client.get(url)).json()["data"]["records"]
        assert records, "the chat has no record yet"
        return dict(records[-1])

    return await eventually(last_record, lambda r: r["status"] != "running", interval=0.05, what="the record's end")


async def test_stop_keeps_the_partial_answer_and_ends_the_stream(remote_stack: Stack, fake_model: FakeOpenAI) -> None:
    slow = ChatReply.stream(["第一段。", "第二段。", "第三段。", "第四段。"], chunk_delay=0.4)
    fake_model.default = lambda body: slow if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        received = bytearray()

        async def read_answer() -> None:
            url = f"/api/application/chat_message/{chat_id}"
            async with client.stream("POST", url, json={"message": QUESTION}) as response:
                async for piece in response.aiter_bytes():
                    received.extend(piece)

        asking = asyncio.create_task(read_answer())
        await eventually(lambda: "第一段".encode() in received)  # part of the answer has arrived
        stopped = await client.post(f"/api/application/chat_message/{chat_id}/stop")
        assert stopped.json()["data"] == {"stopped": True}
        await asking
        frames = parse_frames(bytes(received))
        assert frames[-1].data["is_end"] is True, "a stopped answer still ends its stream properly"
        record = await _finished_record(client, chat_id)
        assert record["status"] == "stopped"
        assert record["answer_text"].startswith("第一段。") and not record["answer_text"].endswith("第四段。")
        idle = await client.post(f"/api/application/chat_message/{chat_id}/stop")
        assert idle.json()["data"] == {"stopped": False}, "nothing is running any more"


async def test_re_chat_keeps_the_old_record_in_the_log_but_not_in_the_history(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        await ask(client, chat_id, QUESTION)
        await ask(client, chat_id, QUESTION, re_chat=True)
        page = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()[
            "data"
        ]
        assert page["total"] == 2 and all(r["status"] == "answered" for r in page["records"])
        fake_model.reset()
        await ask(client, chat_id, "节假日呢？")
        generate = next(b for b in fake_model.chat_bodies if request_kind(b) == "generate")
        history = generate["messages"][1:-1]
        assert [m["role"] for m in history] == ["user", "assistant"], "the replaced answer left the history"


async def test_stop_reaches_an_answer_running_in_another_chat_service_process(
    remote_stack: Stack, fake_model: FakeOpenAI, sessions
) -> None:
    from grpc_stubs.chat.v1 import chat_service_pb2 as pb
    from kbcore.rpc.caller_token import bearer, operator_token
    from kbcore.rpc.client import open_channel
    from services.chat.server import ChatDeps, create_server

    slow = ChatReply.stream([f"第{i}段。" for i in range(1, 30)], chunk_delay=0.2)
    fake_model.default = lambda body: slow if request_kind(body) == "generate" else _assess_ok()
    other_deps = ChatDeps(
        sessions=sessions,
        model=remote_stack.chat_deps.model,
        context_channel=open_channel(remote_stack.context_target, remote_stack.credential),
        retrieval_channel=open_channel(remote_stack.retrieval_target, remote_stack.credential),
    )
    other = await create_server(remote_stack.settings, other_deps, port=0)
    channel = open_channel(f"127.0.0.1:{other.port}", remote_stack.credential)
    try:
        async with remote_stack.http() as client:
            chat_id = await open_chat(client)
            asking = asyncio.create_task(ask(client, chat_id, QUESTION))
            await eventually(
                lambda: any(request_kind(b) == "generate" for b in fake_model.chat_bodies),
                what="the answer's model call",
            )
            reply = await ChatStubs.of(channel).answers.Stop(
                pb.StopRequest(chat_id=chat_id), metadata=bearer(operator_token(remote_stack.settings))
            )
            assert reply.stopped is True, "the other process found the running answer through the lease"
            stopped_at = time.monotonic()
            _, frames = await asking
            assert time.monotonic() - stopped_at < 3.0, "the holder notices within its poll interval"
            assert frames[-1].data["is_end"] is True
            record = await _finished_record(client, chat_id)
            assert record["status"] == "stopped" and record["answer_text"].startswith("第1段。")
            assert not record["answer_text"].endswith("第29段。")
    finally:
        await channel.close()
        await other.stop(grace=1)
        await other_deps.context_channel.close()
        await other_deps.retrieval_channel.close()


async def test_a_model_that_fails_mid_answer_leaves_a_failed_record_with_the_partial_answer(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    def chunk(text: str) -> str:
        return json.dumps(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "fake-chat",
                "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
            }
        )

    broken = ChatReply(
        raw_events=[chunk("已经写出的"), chunk("半句"), json.dumps({"error": {"message": "upstream crashed"}})]
    )
    fake_model.default = lambda body: broken if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200
        assert frames[-1].kind == "error" and frames[-1].data["code"] == 503
        assert "".join(f.data["content"] for f in frames if f.kind == "chunk") == "已经写出的半句"
        record = await _finished_record(client, chat_id)
        assert record["status"] == "failed" and record["answer_text"] == "已经写出的半句"
        # the kind of failure, with the error id of the service log's line that has the endpoint's words
        assert record["error"].startswith(f"{SENTENCES[FailureKind.UNAVAILABLE]} (error id "), record["error"]


async def test_a_failure_in_the_reasoning_form_is_a_last_chunk_that_says_so_without_is_end(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    """For clients that read only data: lines (MaxKB's page): no event names, the failure in the
    content they show, and no is_end, which would say the answer was saved whole."""
    broken = ChatReply(raw_events=[json.dumps({"error": {"message": "upstream crashed"}})])
    fake_model.default = lambda body: broken if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http(headers={"Accept-Language": "zh-CN,zh;q=0.9"}) as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, QUESTION, progress="reasoning")
    assert response.status_code == 200 and {f.kind for f in frames} == {"chunk"}
    last = frames[-1].data
    assert last["error"]["code"] == 503 and last["content"].startswith("（回答失败：") and last["is_end"] is False
    # No English words; the error id (hex digits) is the one value it carries.
    words = re.sub(r"错误 ID [0-9a-f]{12}", "", last["content"] + last["error"]["message"])
    assert not re.search("[A-Za-z]{3,}", words), last
    assert re.search(r"错误 ID [0-9a-f]{12}", last["content"]), last
    assert not any(f.data["is_end"] for f in frames)
    assert any("第 1 轮检索" in f.data["reasoning_content"] for f in frames), "the stages as reasoning lines"


async def test_idle_streams_in_the_reasoning_form_keep_alive_with_empty_chunks(
    remote_stack: Stack, fake_model: FakeOpenAI, monkeypatch
) -> None:
    from gateway import relay

    monkeypatch.setattr(relay, "KEEP_ALIVE_SECONDS", 0.1)
    late = ChatReply.stream(["迟到的回答"], delay=0.6)
    fake_model.default = lambda body: late if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        _, frames = await ask(client, chat_id, QUESTION, progress="reasoning")
    assert {f.kind for f in frames} == {"chunk"}, "no comment line between two chunks"
    empty = [f for f in frames if not f.data["content"] and not f.data["reasoning_content"] and not f.data["is_end"]]
    assert empty and frames[-1].data["is_end"] is True


async def test_idle_streams_carry_keep_alive_comments(remote_stack: Stack, fake_model: FakeOpenAI, monkeypatch) -> None:
    from gateway import relay

    monkeypatch.setattr(relay, "KEEP_ALIVE_SECONDS", 0.1)
    late = ChatReply.stream(["迟到的回答"], delay=0.6)
    fake_model.default = lambda body: late if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http() as client:
        chat_id = await open_chat(client)
        _, frames = await ask(client, chat_id, QUESTION)
    comments = [f for f in frames if f.kind == "comment"]
    assert comments and all(f.raw == b": keep-alive" for f in comments)
    assert frames[-1].data["is_end"] is True


async def test_cors_is_configurable(stack: Stack) -> None:
    import dataclasses

    import httpx

    from gateway.app import create_app
    from gateway.backends import Backends

    settings = dataclasses.replace(stack.settings, cors_origins="https://kb.example.org")
    app = create_app(settings, Backends.connect(settings))
    # 127.0.0.1: a Host name this gateway answers
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        preflight = await client.options(
            "/api/dataset",
            headers={"Origin": "https://kb.example.org", "Access-Control-Request-Method": "GET"},
        )
        assert preflight.headers["access-control-allow-origin"] == "https://kb.example.org"
        foreign = await client.options(
            "/api/dataset", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
        )
        assert "access-control-allow-origin" not in foreign.headers
    await app.state.backends.close()


async def test_a_question_refused_as_busy_costs_a_visitor_no_quota(remote_stack: Stack, fake_model: FakeOpenAI) -> None:
    slow = ChatReply.stream(["慢", "慢", "地", "答"], chunk_delay=0.3)
    fake_model.default = lambda body: slow if request_kind(body) == "generate" else _assess_ok()
    async with remote_stack.http() as operator:
        link = (
            await operator.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={"access_num": 2})
        ).json()
        signed_in = await operator.post(
            "/api/application/authentication", json={"access_token": link["data"]["access_token"]}
        )
    token = signed_in.json()["data"]
    async with remote_stack.http(headers={"Authorization": f"Bearer {token}"}) as visitor:
        chat_id = await open_chat(visitor)
        first = asyncio.create_task(ask(visitor, chat_id, QUESTION))
        await eventually(
            lambda: any(request_kind(b) == "generate" for b in fake_model.chat_bodies), what="the answer's model call"
        )
        busy, _ = await ask(visitor, chat_id, "另一个问题")
        assert busy.status_code == 409
        await first
        second, _ = await ask(visitor, chat_id, "另一个问题")
        assert second.status_code == 200, "the refused question did not use up the quota"
        third, _ = await ask(visitor, chat_id, "第三个问题")
        assert third.status_code == 429
    async with remote_stack.http() as operator:  # leave the demo link generous for other tests
        await operator.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={"access_num": 100})
