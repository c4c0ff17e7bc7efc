"""The OpenAI-compatible endpoint through the client libraries people build on: LangChain
(``ChatOpenAI``, and ``ChatDeepSeek``, which keeps ``reasoning_content``) and litellm (chat
and text completions), each the way docs/api/openai.md tells its users to connect and to
reach the rounds, the sources and the chat id.

Nothing may leave the machine: litellm reads its bundled model cost map
(``LITELLM_LOCAL_MODEL_COST_MAP``, ``LITELLM_OFFLINE_MODE``), and every client call runs under a
guard that refuses, and records, any name lookup or connection that is not loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import socket
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, TypeVar
from unittest import mock

import pytest
from pydantic import SecretStr

from tests.e2e.test_openai_endpoint import COMPOUND, api_key
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

T = TypeVar("T")
LOOPBACK = ("127.0.0.1", "::1", "localhost")
# litellm loads its model cost map when imported: from the wheel, not from the web.
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}


class NetworkGuard:
    """Refuses every name lookup and connection off loopback while it is on, and keeps what
    was tried, so a library that quietly falls back after a failed download is still caught."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    @contextlib.contextmanager
    def on(self) -> Iterator[None]:
        lookup, connect = socket.getaddrinfo, socket.socket.connect

        def guarded_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
            if host not in (None, *LOOPBACK):
                self.tried.append(f"lookup {host}")
                raise socket.gaierror(f"no network in tests: {host}")
            return lookup(host, *args, **kwargs)

        def guarded_connect(sock: socket.socket, address: Any) -> None:
            if isinstance(address, tuple) and address[0] not in LOOPBACK:
                self.tried.append(f"connect {address[0]}")
                raise OSError(f"no network in tests: {address[0]}")
            connect(sock, address)

        with (
            mock.patch.object(socket, "getaddrinfo", guarded_lookup),
            mock.patch.object(socket.socket, "connect", guarded_connect),
        ):
            yield


@pytest.fixture(scope="module")
def guard() -> Iterator[NetworkGuard]:
    watch = NetworkGuard()
    yield watch
    assert not watch.tried, f"a client reached for the network: {watch.tried}"


@pytest.fixture(scope="module")
def litellm(guard: NetworkGuard) -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as env:
        for name, value in OFFLINE.items():
            env.setenv(name, value)
        with guard.on():
            yield importlib.import_module("litellm")


async def offline(guard: NetworkGuard, call: Callable[[], T]) -> T:
    """A client's blocking call, in a thread (the stack serves from this event loop), under the guard."""

    def guarded() -> T:
        with guard.on():
            return call()

    return await asyncio.to_thread(guarded)


def base_url(stack: Stack) -> str:
    return f"{stack.url}/api/application/{DEMO_APPLICATION_ID}"


async def records_of(stack: Stack, chat_id: str) -> list[dict[str, Any]]:
    async with stack.http() as operator:
        page = await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")
    return list(page.json()["data"]["records"])


def round_lines(reasoning: str) -> list[str]:
    lines = reasoning.splitlines()
    assert (
        lines[0] == "正在读取会话上下文…" and lines[1].startswith("第 1 轮检索：") and lines[-1].startswith("正在根据")
    )
    return lines


async def test_langchain_chat_openai_answers_and_reaches_the_chat_id_through_the_response_headers(
    stack: Stack, guard: NetworkGuard
) -> None:
    from langchain_openai import ChatOpenAI

    key = SecretStr(await api_key(stack))
    chat = ChatOpenAI(
        model=DEMO_APPLICATION_ID, base_url=base_url(stack), api_key=key, max_retries=0, include_response_headers=True
    )
    first = await offline(guard, lambda: chat.invoke(COMPOUND))
    assert "16:00" in str(first.content) and first.usage_metadata and first.usage_metadata["output_tokens"] > 0
    chat_id = first.response_metadata["headers"]["x-chat-id"]
    # Bound to the chat: the server keeps its history, whatever messages LangChain sends.
    in_chat = ChatOpenAI(
        model=DEMO_APPLICATION_ID,
        base_url=base_url(stack),
        api_key=key,
        max_retries=0,
        default_headers={"X-Chat-Id": chat_id},
        include_response_headers=True,
    )
    second = await offline(guard, lambda: in_chat.invoke("每次能进几个人？"))
    assert second.response_metadata["headers"]["x-chat-id"] == chat_id
    records = await records_of(stack, chat_id)
    assert [r["problem_text"] for r in records] == [COMPOUND, "每次能进几个人？"]
    assert {r["source"] for r in records} == {"openai_api"}
    cited = await offline(guard, lambda: chat.invoke(COMPOUND, extra_body={"references": True}))
    assert "参考资料：" in str(cited.content), "the sources, as text a chain passes on"


async def test_langchain_chat_deepseek_keeps_the_rounds_in_additional_kwargs(stack: Stack, guard: NetworkGuard) -> None:
    from langchain_deepseek import ChatDeepSeek

    key = SecretStr(await api_key(stack))
    chat = ChatDeepSeek(model=DEMO_APPLICATION_ID, base_url=base_url(stack), api_key=key, max_retries=0)
    whole = await offline(guard, lambda: chat.invoke(COMPOUND))
    lines = round_lines(whole.additional_kwargs["reasoning_content"])
    assert "16:00" in str(whole.content)

    def streamed() -> Any:
        chunks = list(chat.stream(COMPOUND))
        total = chunks[0]
        for chunk in chunks[1:]:
            total += chunk
        return total

    merged = await offline(guard, streamed)
    assert round_lines(merged.additional_kwargs["reasoning_content"]) == lines, "each line once, in order"
    assert "16:00" in str(merged.content)


async def test_litellm_completion_carries_rounds_sources_and_chat_id(
    stack: Stack, guard: NetworkGuard, litellm: ModuleType
) -> None:
    key = await api_key(stack)
    ask = {"model": f"openai/{DEMO_APPLICATION_ID}", "api_base": base_url(stack), "api_key": key}
    messages = [{"role": "user", "content": COMPOUND}]
    reply = await offline(guard, lambda: litellm.completion(messages=messages, **ask))
    message = reply.choices[0].message
    assert "16:00" in message.content
    assert round_lines(message.reasoning_content) == message.provider_specific_fields["rounds"]
    assert reply.sources and reply.sources[0]["document_name"]
    assert reply._hidden_params["additional_headers"]["llm_provider-x-chat-id"] == reply.chat_id
    assert [r["source"] for r in await records_of(stack, reply.chat_id)] == ["openai_api"]

    def streamed() -> list[Any]:
        return list(litellm.completion(messages=messages, stream=True, stream_options={"include_usage": True}, **ask))

    chunks = await offline(guard, streamed)
    last = next(c for c in chunks if c.choices and c.choices[0].finish_reason == "stop")
    assert last.sources and last.chat_id
    built = litellm.stream_chunk_builder(chunks, messages=messages)
    assert round_lines(built.choices[0].message.reasoning_content) == message.provider_specific_fields["rounds"]
    assert "16:00" in built.choices[0].message.content and built.usage.total_tokens > 0


async def test_litellm_text_completion_uses_the_legacy_endpoint(
    stack: Stack, guard: NetworkGuard, litellm: ModuleType
) -> None:
    key = await api_key(stack)
    reply = await offline(
        guard,
        lambda: litellm.text_completion(
            model=f"text-completion-openai/{DEMO_APPLICATION_ID}",
            api_base=base_url(stack),
            api_key=key,
            prompt=COMPOUND,
        ),
    )
    assert reply.object == "text_completion" and reply.id.startswith("cmpl-")
    choice = reply.choices[0]
    assert "16:00" in choice.text and round_lines(choice.reasoning_content) == choice.rounds
    assert reply.sources and [r["source"] for r in await records_of(stack, reply.chat_id)] == ["openai_api"]
