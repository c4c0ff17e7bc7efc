"""Every application as an OpenAI chat-completions endpoint, exercised with the official
``openai`` Python SDK: answers streamed and whole, the retrieval rounds as reasoning, the
sources, usage, the SDK's own exceptions for refusals, records in the log and the export."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionContentPartTextParam, ChatCompletionMessageParam

from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import READS_ENGLISH, Stack
from tests.shared_tls import TLS
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

NODE_CLIENT = Path(__file__).resolve().parent / "openai_js"
COMPOUND = "云岭县人民医院ICU每天的探视时间是几点到几点？另外，医保在县级定点医院住院报销比例是多少？"


async def api_key(stack: Stack, app_id: str = DEMO_APPLICATION_ID) -> str:
    async with stack.http() as operator:
        return str((await operator.post(f"/api/application/{app_id}/api_key")).json()["data"]["secret_key"])


def sdk(stack: Stack, key: str, app_id: str | None = DEMO_APPLICATION_ID) -> openai.AsyncOpenAI:
    base = f"{stack.url}/api/application/{app_id}" if app_id else f"{stack.url}/v1"
    return openai.AsyncOpenAI(base_url=base, api_key=key, max_retries=0, timeout=120, default_headers=READS_ENGLISH)


async def test_a_whole_answer_carries_rounds_sources_usage_and_is_saved(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    reply = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID, messages=[{"role": "user", "content": COMPOUND}], extra_body={"references": True}
    )
    message = reply.choices[0].message
    assert "16:00" in (message.content or "") and "References:" in (message.content or "")
    reasoning = (message.model_extra or {})["reasoning_content"]
    lines = reasoning.splitlines()
    assert (
        lines[0] == "Reading the conversation so far…"
        and lines[1].startswith("Search round 1: ")
        and lines[-1].startswith("Writing the answer")
    )
    sources = (reply.model_extra or {})["sources"]
    assert sources and {"id", "document_name", "title", "similarity"} <= set(sources[0])
    assert reply.usage is not None and reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    chat_id = (reply.model_extra or {})["chat_id"]
    async with stack.http() as operator:
        page = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()
        record = page["data"]["records"][0]
        assert record["source"] == "openai_api" and record["status"] == "answered"
        assert record["agent_trace"] and record["paragraph_list"], "the trace is on the log like any record"
        export = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/export")).text
    rows = [r for r in csv.DictReader(io.StringIO(export.lstrip("\ufeff"))) if r["chat_id"] == chat_id]
    assert rows and rows[0]["source"] == "openai_api" and int(rows[0]["rounds"]) >= 1
    await client.close()


async def test_a_streamed_answer_sends_the_rounds_in_order_then_the_sources_and_usage(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    stream = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID,
        messages=[{"role": "user", "content": COMPOUND}],
        stream=True,
        stream_options={"include_usage": True},
    )
    reasoning, content, sources, usage = [], [], None, None
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            extra = choice.delta.model_extra or {}
            reasoning.append(extra.get("reasoning_content") or "")
            content.append(choice.delta.content or "")
            if choice.finish_reason == "stop":
                sources = (chunk.model_extra or {}).get("sources")
    lines = "".join(reasoning).splitlines()
    assert lines[1].startswith("Search round 1: ") and lines[-1] == "Writing the answer from the evidence found…"
    retrieving = [line for line in lines if line.startswith("Search round ")]
    assert [int(line.split(" ")[2][:-1]) for line in retrieving] == sorted(
        int(line.split(" ")[2][:-1]) for line in retrieving
    )
    assert "16:00" in "".join(content)
    assert sources and all("document_name" in s for s in sources)
    assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0
    await client.close()


async def test_the_deployment_wide_v1_path_selects_the_application_by_key(stack: Stack) -> None:
    key = await api_key(stack)
    client = sdk(stack, key, app_id=None)
    listed = await client.models.list()
    assert [m.id for m in listed.data] == [DEMO_APPLICATION_ID]
    reply = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID, messages=[{"role": "user", "content": "云岭县人民医院ICU探视时间？"}]
    )
    assert "16:00" in (reply.choices[0].message.content or "")
    await client.close()


async def test_refusals_are_the_sdks_own_exceptions_with_their_status(stack: Stack) -> None:
    key = await api_key(stack)
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": "年假有几天？"}]
    with pytest.raises(openai.AuthenticationError):
        await sdk(stack, "application-" + "0" * 32).chat.completions.create(model=DEMO_APPLICATION_ID, messages=ask)
    client = sdk(stack, key)
    with pytest.raises(openai.NotFoundError) as unknown:
        await client.chat.completions.create(model="gpt-4o", messages=ask)
    assert "gpt-4o" in unknown.value.message
    with pytest.raises(openai.BadRequestError) as many:
        await client.chat.completions.create(model=DEMO_APPLICATION_ID, messages=ask, n=2)
    assert many.value.body["param"] == "n"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as tools:
        await client.chat.completions.create(
            model=DEMO_APPLICATION_ID,
            messages=ask,
            tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        )
    assert "tools" in tools.value.message
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]
    with pytest.raises(openai.BadRequestError) as picture:
        await client.chat.completions.create(model=DEMO_APPLICATION_ID, messages=image)  # type: ignore[arg-type]
    assert "image_url" in picture.value.message
    with pytest.raises(openai.BadRequestError) as last:
        await client.chat.completions.create(
            model=DEMO_APPLICATION_ID, messages=[*ask, {"role": "assistant", "content": "5天"}]
        )
    assert "last message" in last.value.message
    with pytest.raises(openai.BadRequestError):
        await client.chat.completions.create(model=DEMO_APPLICATION_ID, messages=ask, temperature=3)
    await client.close()


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"model": DEMO_APPLICATION_ID}, 400, "messages"),
        ({"messages": []}, 400, "messages"),
        ({"messages": [{"role": "system", "content": "你好"}]}, 400, "last message"),
        ({"messages": [{"role": "user", "content": "问"}] * 10_000}, 400, "messages"),
        ({"messages": [{"role": "user", "content": "问"}], "stream": "yes"}, 400, "stream"),
        ({"messages": [{"role": "user", "content": "问"}], "temperature": 9}, 400, "temperature"),
        ({"messages": [{"role": "user", "content": "问" * 5_000_000}]}, 413, "larger than"),
    ],
)
async def test_bad_requests_get_openai_shaped_errors_and_leave_no_record(
    stack: Stack, body: dict[str, object], status: int, words: str
) -> None:
    key = await api_key(stack)
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, timeout=60, headers={"Authorization": f"Bearer {key}", **READS_ENGLISH}
    ) as client:
        before = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/export")).text.count("\n")
        reply = await client.post(f"/api/application/{DEMO_APPLICATION_ID}/chat/completions", json=body)
        after = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/export")).text.count("\n")
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert words in error["message"] and error["type"] == "invalid_request_error"
    assert after == before, "a refused request leaves no record"


async def test_client_side_history_gives_the_same_rewrite_and_retrieval_as_the_chat_routes(stack: Stack) -> None:
    turns = [
        "云岭县人民医院普通病区的探视时间是怎样规定的？" + "请详细说明。" * 300,  # a long earlier turn
        "ICU呢？",
        "每次能进去几个人？",
    ]
    async with stack.http() as operator:
        created = await operator.post(
            "/api/application", json={"name": "openai-history", "dataset_id_list": [DEMO_DATASET_ID]}
        )
        app_id = created.json()["data"]["id"]
        chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        for question in turns:
            await operator.post(f"/api/application/chat_message/{chat_id}", json={"message": question})
        records = (await operator.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
    stored = records["records"]
    messages: list[dict[str, str]] = []
    for record in stored[:2]:
        messages += [
            {"role": "user", "content": record["problem_text"]},
            {"role": "assistant", "content": record["answer_text"]},
        ]
    messages.append({"role": "user", "content": turns[2]})
    client = sdk(stack, await api_key(stack, app_id), app_id=app_id)
    reply = await client.chat.completions.create(model=app_id, messages=messages)  # type: ignore[arg-type]
    await client.close()
    new_chat = (reply.model_extra or {})["chat_id"]
    async with stack.http() as operator:
        stateless = (await operator.get(f"/api/application/{app_id}/chat/{new_chat}/chat_record/1/10")).json()["data"]
    [record] = stateless["records"]
    assert record["padding_problem_text"] == stored[2]["padding_problem_text"]
    assert [r["queries"] for r in record["agent_trace"]] == [r["queries"] for r in stored[2]["agent_trace"]]
    assert [p["id"] for p in record["paragraph_list"]] == [p["id"] for p in stored[2]["paragraph_list"]]
    assert record["context_info"]["recent_rounds"] == stored[2]["context_info"]["recent_rounds"] == 2


async def test_naming_a_server_side_chat_uses_its_history_not_the_messages_sent(stack: Stack) -> None:
    key = await api_key(stack)
    client = sdk(stack, key)
    first = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID,
        messages=[{"role": "user", "content": "云岭县人民医院ICU每天的探视时间是几点到几点？"}],
    )
    chat_id = (first.model_extra or {})["chat_id"]
    second = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID,
        messages=[{"role": "user", "content": "无关的话"}, {"role": "user", "content": "每次能进几个人？"}],
        extra_body={"chat_id": chat_id},
    )
    assert (second.model_extra or {})["chat_id"] == chat_id
    async with stack.http() as operator:
        page = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()
    assert [r["problem_text"] for r in page["data"]["records"]] == [
        "云岭县人民医院ICU每天的探视时间是几点到几点？",
        "每次能进几个人？",
    ]
    assert page["data"]["records"][1]["context_info"]["recent_rounds"] == 1, "the chat's own turn, not the messages"
    await client.close()


async def test_a_client_that_leaves_mid_stream_stops_the_model_stream(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    fake_model.default = lambda body: (
        ChatReply.hang(["已经生成的", "部分回答"])
        if request_kind(body) == "generate"
        else ChatReply(content='{"sufficient": true, "missing": "", "queries": []}')
    )
    key = await api_key(remote_stack)
    body = {"model": DEMO_APPLICATION_ID, "stream": True, "messages": [{"role": "user", "content": COMPOUND}]}
    async with httpx.AsyncClient(
        verify=TLS, base_url=remote_stack.url, timeout=60, headers={"Authorization": f"Bearer {key}"}
    ) as client:
        received = b""
        async with client.stream(
            "POST", f"/api/application/{DEMO_APPLICATION_ID}/chat/completions", json=body
        ) as response:
            assert response.status_code == 200
            async for piece in response.aiter_bytes():
                received += piece
                if "部分回答".encode() in received:
                    break
    left = time.monotonic()
    assert await asyncio.to_thread(fake_model.wait_for_cancelled_stream, 5.0)
    assert time.monotonic() - left < 1.0, "the model stream must stop within a second"
    first = json.loads(received.split(b"\n\n")[0].removeprefix(b"data: "))
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"]["role"] == "assistant"


async def run_node(stack: Stack, script: str) -> dict[str, Any]:
    """Run ``script`` (tests/e2e/openai_js, the official npm package) against the demo
    application; what it printed, as JSON."""
    assert shutil.which("node"), "Node.js is part of the test machine (scripts/test-deps.sh)"
    assert (NODE_CLIENT / "node_modules" / "openai").is_dir(), "run scripts/test-deps.sh: it installs the npm package"
    env = {
        **os.environ,
        "BASE_URL": f"{stack.url}/api/application/{DEMO_APPLICATION_ID}",
        "API_KEY": await api_key(stack),
        "MODEL": DEMO_APPLICATION_ID,
        "QUESTION": COMPOUND,
    }
    ran = await asyncio.to_thread(
        subprocess.run, ["node", script], cwd=NODE_CLIENT, env=env, capture_output=True, text=True, timeout=180
    )
    assert ran.returncode == 0, ran.stderr
    return dict(json.loads(ran.stdout))


async def test_the_official_openai_npm_package_streams_answers_and_raises_its_own_errors(stack: Stack) -> None:
    seen = await run_node(stack, "client.mjs")
    assert "16:00" in seen["content"] and "16:00" in seen["whole"]
    assert "第 1 轮检索：" in seen["reasoning"]
    assert seen["sources"] and seen["sources"][0]["document_name"]
    assert seen["usage"]["total_tokens"] > 0 and seen["wholeUsage"]["completion_tokens"] > 0
    assert seen["refusal"]["status"] == 401 and seen["refusal"]["isAuth"] is True


async def test_the_npm_stream_helpers_final_message_holds_every_round(stack: Stack) -> None:
    """The helper merges a delta's other fields by overwriting (Object.assign): its
    ``reasoning_content`` ends as the last piece only, so the last chunk's ``rounds`` carry them all."""
    seen = await run_node(stack, "helpers.mjs")
    message = seen["final"]["message"]
    streamed_lines = seen["streamedReasoning"].splitlines()
    assert message["rounds"] == streamed_lines, "every round line, once each, in order"
    assert message["rounds"][0] == "正在读取会话上下文…" and message["rounds"][1].startswith("第 1 轮检索：")
    assert len(message["rounds"]) > 3 and message["reasoning_content"] != seen["streamedReasoning"]
    assert "16:00" in message["content"] and seen["final"]["sources"] and seen["final"]["chatId"]
    assert seen["model"] == {"id": DEMO_APPLICATION_ID, "object": "model", "ownedBy": "kb-chat"}
    assert seen["unknownModel"] == {"status": 404, "code": "model_not_found", "isNotFound": True}
    assert seen["text"]["object"] == "text_completion" and "16:00" in seen["text"]["text"]
    assert seen["text"]["rounds"] == message["rounds"], "the same question walks the same rounds"


async def test_a_client_system_message_follows_the_applications_prompt_and_a_busy_chat_is_409(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    slow = ChatReply.stream(["慢", "慢", "地", "答"], chunk_delay=0.3)
    fake_model.default = lambda body: (
        slow
        if request_kind(body) == "generate"
        else ChatReply(content='{"sufficient": true, "missing": "", "queries": []}')
    )
    client = sdk(remote_stack, await api_key(remote_stack))
    first = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID,
        messages=[{"role": "system", "content": "请用英文回答。"}, {"role": "user", "content": COMPOUND}],
    )
    generate = next(b for b in fake_model.chat_bodies if request_kind(b) == "generate")
    system = generate["messages"][0]["content"]
    assert system.index("你是知识库助手") < system.index("请用英文回答。") < system.index("只用本次检索资料")
    chat_id = (first.model_extra or {})["chat_id"]
    generations = sum(request_kind(b) == "generate" for b in fake_model.chat_bodies)
    ask = [{"role": "user", "content": "每次能进几个人？"}]
    running = asyncio.create_task(
        client.chat.completions.create(model=DEMO_APPLICATION_ID, messages=ask, extra_body={"chat_id": chat_id})  # type: ignore[arg-type]
    )
    await eventually(
        lambda: sum(request_kind(b) == "generate" for b in fake_model.chat_bodies) > generations,
        what="the second question's answer starting",
    )
    with pytest.raises(openai.ConflictError) as busy:
        await client.chat.completions.create(model=DEMO_APPLICATION_ID, messages=ask, extra_body={"chat_id": chat_id})  # type: ignore[arg-type]
    assert "already answering" in busy.value.message
    assert "慢慢地答" in ((await running).choices[0].message.content or "")
    await client.close()


async def test_text_parts_are_read_and_an_overlong_question_is_413(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    parts: list[ChatCompletionContentPartTextParam] = [
        {"type": "text", "text": "云岭县人民医院ICU"},
        {"type": "text", "text": "每天的探视时间？"},
    ]
    reply = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID, messages=[{"role": "user", "content": parts}]
    )
    assert "16:00" in (reply.choices[0].message.content or "")
    with pytest.raises(openai.APIStatusError) as long:
        await client.chat.completions.create(
            model=DEMO_APPLICATION_ID, messages=[{"role": "user", "content": "问" * 9000}]
        )
    assert long.value.status_code == 413 and "4000" in long.value.message
    await client.close()


async def test_a_model_is_retrieved_by_id_or_name_and_an_unknown_one_is_openais_404(stack: Stack) -> None:
    key = await api_key(stack)
    async with stack.http() as operator:
        name = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}")).json()["data"]["name"]
    for client in (sdk(stack, key), sdk(stack, key, app_id=None)):
        model = await client.models.retrieve(DEMO_APPLICATION_ID)
        assert (model.id, model.object, model.owned_by) == (DEMO_APPLICATION_ID, "model", "kb-chat")
        assert (await client.models.retrieve(name)).id == name
        with pytest.raises(openai.NotFoundError) as unknown:
            await client.models.retrieve("gpt-4o")
        assert unknown.value.code == "model_not_found" and "gpt-4o" in unknown.value.message
        await client.close()
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, timeout=60, headers={"Authorization": f"Bearer {key}", **READS_ENGLISH}
    ) as http:
        for path in ("/v1/models/gpt-4o", f"/api/application/{'0' * 32}/models/x"):
            reply = await http.get(path)
            assert reply.status_code == 404 and set(reply.json()) == {"error"}, reply.text
            assert reply.json()["error"]["code"] == "model_not_found" and reply.json()["error"]["param"] == "model"


async def test_a_legacy_completion_is_the_same_ask_in_the_text_completion_shape(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    raw = await client.completions.with_raw_response.create(
        model=DEMO_APPLICATION_ID, prompt=COMPOUND, extra_body={"references": True}
    )
    reply = raw.parse()
    assert reply.object == "text_completion" and reply.id.startswith("cmpl-")
    [choice] = reply.choices
    assert "16:00" in choice.text and "References:" in choice.text
    assert choice.finish_reason == "stop" and choice.logprobs is None and choice.index == 0
    extra = choice.model_extra or {}
    assert extra["rounds"] == extra["reasoning_content"].splitlines() and extra["rounds"][1].startswith(
        "Search round 1: "
    )
    assert reply.usage is not None and reply.usage.total_tokens > 0
    assert (reply.model_extra or {})["sources"]
    chat_id = (reply.model_extra or {})["chat_id"]
    assert raw.headers["x-chat-id"] == chat_id
    async with stack.http() as operator:
        page = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()
    [record] = page["data"]["records"]
    assert record["source"] == "openai_api" and record["problem_text"] == COMPOUND
    follow = await client.completions.create(
        model=DEMO_APPLICATION_ID, prompt=["每次能进几个人？"], extra_headers={"X-Chat-Id": chat_id}
    )
    assert (follow.model_extra or {})["chat_id"] == chat_id, "the header continues the chat"
    await client.close()


# What LlamaIndex's completion-mode chat() sends (its messages_to_prompt): one "role: text"
# line per turn, then "assistant: " for the model to go on.
TURNS_PROMPT = (
    "system: 请用中文回答。\n"
    "user: 云岭县人民医院ICU每天的探视时间是几点到几点？\n"
    "assistant: ICU每天16:00至16:30可以探视。\n"
    "user: 每次能进去几个人？\n"
    "assistant: "
)


async def test_a_prompt_written_as_turns_asks_its_last_user_turn_with_the_others_as_history(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    reply = await client.completions.create(model=DEMO_APPLICATION_ID, prompt=TURNS_PROMPT)
    plain = await client.completions.create(model=DEMO_APPLICATION_ID, prompt="user: 这个词是什么意思？")
    await client.close()
    async with stack.http() as operator:
        records = {}
        for name, answer in (("turns", reply), ("plain", plain)):
            chat_id = (answer.model_extra or {})["chat_id"]
            page = (
                await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")
            ).json()
            [records[name]] = page["data"]["records"]
    assert records["turns"]["problem_text"] == "每次能进去几个人？", "one question, not the transcript"
    assert records["turns"]["context_info"]["recent_rounds"] == 1, "the earlier turns are its history"
    assert "ICU" in records["turns"]["padding_problem_text"], "the follow-up read with its history"
    assert records["plain"]["problem_text"] == "user: 这个词是什么意思？", "a question that is not turns stays whole"


async def test_a_streamed_legacy_completion_sends_text_chunks_rounds_sources_and_usage(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack), app_id=None)
    stream = await client.completions.create(
        model=DEMO_APPLICATION_ID, prompt=COMPOUND, stream=True, stream_options={"include_usage": True}
    )
    text, reasoning, rounds, sources, usage, objects = [], [], None, None, None, set()
    async for chunk in stream:
        objects.add(chunk.object)
        usage = chunk.usage or usage
        for choice in chunk.choices:
            text.append(choice.text)
            reasoning.append((choice.model_extra or {}).get("reasoning_content") or "")
            if choice.finish_reason == "stop":
                rounds = (choice.model_extra or {})["rounds"]
                sources = (chunk.model_extra or {})["sources"]
    assert objects == {"text_completion"} and "16:00" in "".join(text)
    assert rounds == "".join(reasoning).splitlines() and rounds[-1] == "Writing the answer from the evidence found…"
    assert sources and all("document_name" in s for s in sources)
    assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens > 0
    await client.close()


async def test_the_python_stream_helper_keeps_every_round_once_and_the_chat_id_is_a_header(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": COMPOUND}]
    async with client.chat.completions.stream(model=DEMO_APPLICATION_ID, messages=ask) as stream:
        final = await stream.get_final_completion()
    message = final.choices[0].message
    extra = message.model_extra or {}
    assert extra["reasoning_content"].splitlines() == extra["rounds"], "concatenated deltas: each line once"
    assert len(extra["rounds"]) > 3 and "16:00" in (message.content or "")
    raw = await client.chat.completions.with_raw_response.create(model=DEMO_APPLICATION_ID, messages=ask)
    assert raw.headers["x-chat-id"] == (raw.parse().model_extra or {})["chat_id"]
    async with client.chat.completions.with_streaming_response.create(
        model=DEMO_APPLICATION_ID, messages=ask, stream=True
    ) as streamed:
        assert streamed.headers["x-chat-id"], "a stream names its chat before the first chunk"
    await client.close()


async def test_what_front_ends_send_by_default_is_accepted(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": "云岭县人民医院ICU探视时间？"}]
    for choice in ("none", "auto"):
        reply = await client.chat.completions.create(
            model=DEMO_APPLICATION_ID,
            messages=ask,
            tool_choice=choice,
            modalities=["text"],
            tools=[],
            logprobs=False,
            response_format={"type": "text"},
            logit_bias={},
        )
        assert "16:00" in (reply.choices[0].message.content or "")
    await client.close()


FUNCTION_CHOICE = {"type": "function", "function": {"name": "lookup"}}


@pytest.mark.parametrize(
    ("path", "body", "param", "words"),
    [
        ("completions", {"prompt": ["第一个问题", "第二个问题"]}, "prompt", "one prompt (the question), not 2"),
        ("completions", {"prompt": ""}, "prompt", "the prompt is empty"),
        ("completions", {"prompt": "   "}, "prompt", "the prompt is empty"),
        ("completions", {"prompt": [101, 102]}, "prompt", "token ids are not read"),
        ("completions", {}, "prompt", "Field required"),
        ("completions", {"prompt": "问", "echo": True}, "echo", "never repeats the question"),
        ("completions", {"prompt": "问", "best_of": 3}, "best_of", "one answer per question"),
        ("completions", {"prompt": "问", "tool_choice": FUNCTION_CHOICE}, "tool_choice", "calls no tools"),
        ("chat/completions", {"tool_choice": FUNCTION_CHOICE}, "tool_choice", "calls no tools"),
        ("chat/completions", {"tool_choice": "required"}, "tool_choice", "calls no tools"),
        ("chat/completions", {"modalities": ["audio"]}, "modalities", "text only"),
        ("chat/completions", {"modalities": ["text", "audio"]}, "modalities", "text only"),
        ("chat/completions", {"logprobs": True}, "logprobs", "no token probabilities"),
        ("chat/completions", {"top_logprobs": 3}, "top_logprobs", "no token probabilities"),
        ("chat/completions", {"response_format": {"type": "json_object"}}, "response_format", "never in JSON"),
        (
            "completions",
            {"prompt": "问", "response_format": {"type": "json_object"}},
            "response_format",
            "never in JSON",
        ),
        ("chat/completions", {"logit_bias": {"1234": 5}}, "logit_bias", "takes no token biases"),
    ],
)
async def test_what_an_application_cannot_do_is_a_400_that_names_the_field(
    stack: Stack, path: str, body: dict[str, object], param: str, words: str
) -> None:
    key = await api_key(stack)
    if path == "chat/completions":
        body = {"messages": [{"role": "user", "content": "问"}], **body}
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, timeout=60, headers={"Authorization": f"Bearer {key}", **READS_ENGLISH}
    ) as client:
        reply = await client.post(f"/api/application/{DEMO_APPLICATION_ID}/{path}", json=body)
    assert reply.status_code == 400, reply.text
    assert set(reply.json()) == {"error"}
    error = reply.json()["error"]
    assert words in error["message"] and error["param"] == param and error["type"] == "invalid_request_error"


async def test_the_sdk_raises_bad_request_naming_a_parameter_an_application_cannot_honour(stack: Stack) -> None:
    client = sdk(stack, await api_key(stack))
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": "云岭县人民医院ICU探视时间？"}]
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(model=DEMO_APPLICATION_ID, messages=ask, logprobs=True, top_logprobs=2)
    assert refused.value.param == "logprobs" and "no token probabilities" in refused.value.message
    with pytest.raises(openai.BadRequestError) as refused:
        await client.chat.completions.create(
            model=DEMO_APPLICATION_ID, messages=ask, response_format={"type": "json_object"}
        )
    assert refused.value.param == "response_format" and "never in JSON" in refused.value.message
    await client.close()


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/v1/embeddings", 404),
        ("GET", "/v1/files", 404),
        ("POST", "/v1/responses", 404),
        ("POST", "/v1/audio/speech", 404),
        ("GET", "/v1/no/such/thing", 404),
        ("GET", "/v1/chat/completions", 405),
        ("POST", "/v1/models", 405),
        ("POST", "/api/application/{app}/embeddings", 404),
        ("GET", "/api/application/{app}/files", 404),
        ("POST", "/api/application/{app}/images/generations", 404),
        ("POST", "/api/application/{app}/audio/transcriptions", 404),
        ("POST", "/api/application/{app}/moderations", 404),
        ("POST", "/api/application/{app}/responses", 404),
        ("DELETE", "/api/application/{app}/chat/completions", 405),
        ("GET", "/api/application/{app}/completions", 405),
    ],
)
async def test_an_openai_path_not_served_is_openais_404_or_405(
    stack: Stack, method: str, path: str, status: int
) -> None:
    key = await api_key(stack)
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, timeout=60, headers={"Authorization": f"Bearer {key}", **READS_ENGLISH}
    ) as client:
        reply = await client.request(method, path.format(app=DEMO_APPLICATION_ID), json={"input": "x"})
    assert reply.status_code == status, reply.text
    assert set(reply.json()) == {"error"}, "OpenAI's error object, not MaxKB's envelope"
    error = reply.json()["error"]
    assert error["code"] == ("unknown_url" if status == 404 else "method_not_allowed")
    assert error["message"].startswith(f"{method} ") and "not served" in error["message"]


async def test_the_sdk_raises_not_found_for_an_unserved_resource_and_maxkb_routes_keep_their_shape(
    stack: Stack,
) -> None:
    client = sdk(stack, await api_key(stack))
    with pytest.raises(openai.NotFoundError) as embeddings:
        await client.embeddings.create(model=DEMO_APPLICATION_ID, input="探视")
    assert "POST chat/completions" in embeddings.value.message
    await client.close()
    async with stack.http() as operator:
        keys = await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/api_key")
        assert keys.status_code == 200 and keys.json()["code"] == 200
        unknown = await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/no_such_route")
        assert unknown.status_code == 404 and set(unknown.json()) == {"code", "message", "data"}
        wrong_method = await operator.delete(f"/api/application/{DEMO_APPLICATION_ID}/api_key")
        assert wrong_method.status_code == 405 and set(wrong_method.json()) == {"code", "message", "data"}
