"""A reasoning model's thinking, from the model stream to the wire and the record:
streamed in MaxKB's chunk field ``reasoning_content`` before the answer, kept in the record's
details, and never sent back to the model as history — whether the history is the chat's
stored records or the messages an OpenAI client sends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ChatRecord
from kbcore.text.tokens import count_tokens
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.store.base import VectorStore
from tests.e2e.conftest import ANSWER_CHUNKS, route
from tests.e2e.test_openai_endpoint import api_key, sdk
from tests.fakes.openai_server import FakeOpenAI, client_for, request_kind
from tests.fakes.providers import THINKING as DEEPSEEK_THINKING
from tests.fakes.providers import FakeDeepSeek
from tests.harness import Stack, start_stack
from tests.sse_client import answer_text, ask
from tests.thinking_model import THINKING, thinking_stack
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？城乡居民医保参保人在县级定点医院住院，报销比例是多少？"
ANSWER = "".join(ANSWER_CHUNKS)
THOUGHT = "".join(THINKING)


@pytest.fixture(name="thinking_stack")
async def _thinking_stack(
    stack: Stack,
    fake_model: FakeOpenAI,
    sessions: async_sessionmaker[AsyncSession],
    store: VectorStore,
    embedder: Embedder,
) -> AsyncIterator[Stack]:
    async with thinking_stack(stack, fake_model, sessions, store, embedder) as running:
        yield running


def _texts(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


async def test_thinking_streams_first_is_recorded_and_never_becomes_history(
    thinking_stack: Stack, fake_model: FakeOpenAI, sessions: async_sessionmaker[AsyncSession]
) -> None:
    async with thinking_stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200
        chunks = [f.data for f in frames if f.kind == "chunk"]
        thinking = [c["reasoning_content"] for c in chunks if c["reasoning_content"]]
        assert thinking == list(THINKING), "each thinking delta is one chunk, in order"
        kinds = [
            "reasoning" if c["reasoning_content"] else "content"
            for c in chunks
            if c["content"] or c["reasoning_content"]
        ]
        assert kinds == ["reasoning"] * len(THINKING) + ["content"] * len(ANSWER_CHUNKS), "thinking before the answer"
        assert not any(c["content"] and c["reasoning_content"] for c in chunks), "a chunk carries one or the other"
        assert answer_text(frames) == ANSWER, "the answer text is untouched by the thinking"
        assert chunks[-1]["is_end"] is True and chunks[-1]["reasoning_content"] == ""

        record_id = chunks[-1]["chat_record_id"]
        record = (
            await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/{record_id}")
        ).json()["data"]
        assert record["reasoning_content"] == THOUGHT and record["answer_text"] == ANSWER
        assert record["answer_tokens"] == count_tokens(ANSWER), "the estimate counts the answer, not the thinking"
        async with sessions() as session:
            row = (await session.execute(select(ChatRecord).where(ChatRecord.id == int(record_id)))).scalar_one()
        assert row.answer == ANSWER and row.details["chat"]["reasoning"] == THOUGHT

        # Turn 2: the history (rewrite and generation) carries turn 1's answer, never its thinking.
        fake_model.reset()
        response, frames = await ask(client, chat_id, "节假日呢？")
        assert response.status_code == 200 and answer_text(frames) == ANSWER
        bodies = {request_kind(b): b for b in fake_model.chat_bodies}
        assert {"rewrite", "generate"} <= set(bodies)
        generate = bodies["generate"]
        assert [m["role"] for m in generate["messages"]] == ["system", "user", "assistant", "user"]
        assert generate["messages"][2]["content"] == ANSWER, "turn 1's answer is the history"
        for body in fake_model.chat_bodies:
            for piece in THINKING:
                assert piece not in _texts(body), f"thinking leaked into a {request_kind(body)} request"


async def test_the_openai_endpoint_passes_the_thinking_as_reasoning_content(
    thinking_stack: Stack, fake_model: FakeOpenAI
) -> None:
    client = sdk(thinking_stack, await api_key(thinking_stack))
    stream = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID,
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        extra_body={"show_rounds": False},
    )
    order: list[tuple[str, str]] = []
    async for chunk in stream:
        for choice in chunk.choices:
            reasoning = (choice.delta.model_extra or {}).get("reasoning_content")
            if reasoning:
                order.append(("reasoning", reasoning))
            if choice.delta.content:
                order.append(("content", choice.delta.content))
    assert [text for kind, text in order if kind == "reasoning"] == list(THINKING)
    assert "".join(text for kind, text in order if kind == "content") == ANSWER
    assert [kind for kind, _ in order] == ["reasoning"] * len(THINKING) + ["content"] * len(ANSWER_CHUNKS)

    # Whole: the thinking in message.reasoning_content. A client that sends an earlier answer
    # back with its reasoning_content (as a client keeping DeepSeek's replies may) has only the answer forwarded.
    fake_model.reset()
    reply = await client.chat.completions.create(
        model=DEMO_APPLICATION_ID,
        messages=[
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": ANSWER, "reasoning_content": "上一轮的思考不应再发给模型"},  # type: ignore[list-item]
            {"role": "user", "content": "节假日呢？"},
        ],
        extra_body={"show_rounds": False},
    )
    message = reply.choices[0].message
    assert message.content == ANSWER and (message.model_extra or {})["reasoning_content"] == THOUGHT
    generate = next(b for b in fake_model.chat_bodies if request_kind(b) == "generate")
    assert any(m["role"] == "assistant" and m["content"] == ANSWER for m in generate["messages"])
    assert "上一轮的思考" not in str(generate) and THINKING[0] not in _texts(generate)
    await client.close()


@pytest.fixture(scope="module")
def deepseek() -> Iterator[FakeOpenAI]:
    with FakeDeepSeek(default=route) as server:
        yield server


async def test_a_deepseek_like_endpoint_s_thinking_reaches_the_chunks_and_record_but_not_turn_two(
    stack: Stack,
    deepseek: FakeOpenAI,
    sessions: async_sessionmaker[AsyncSession],
    store: VectorStore,
    embedder: Embedder,
) -> None:
    """The whole path with the real client: ``reasoning_content`` over HTTP from the provider,
    through the chat service, into MaxKB's chunk and the record, and out of the next turn."""
    model = client_for(deepseek, disable_thinking=True)
    running = await start_stack(stack.settings, sessions=sessions, store=store, embedder=embedder, model=model)
    thought = "".join(DEEPSEEK_THINKING)
    try:
        async with running.http() as client:
            chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
            _, frames = await ask(client, chat_id, QUESTION)
            chunks = [f.data for f in frames if f.kind == "chunk"]
            assert "".join(c["reasoning_content"] for c in chunks) == thought
            assert answer_text(frames) == ANSWER
            record_id = chunks[-1]["chat_record_id"]
            record = (
                await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/{record_id}")
            ).json()["data"]
            assert record["reasoning_content"] == thought and record["answer_text"] == ANSWER

            deepseek.reset()
            await ask(client, chat_id, "节假日呢？")
            generate = next(b for b in deepseek.chat_bodies if request_kind(b) == "generate")
            assert generate["messages"][2] == {"role": "assistant", "content": ANSWER}
            for body in deepseek.chat_bodies:
                assert all(piece not in _texts(body) for piece in DEEPSEEK_THINKING), request_kind(body)
    finally:
        await running.stop()
        await model.aclose()
