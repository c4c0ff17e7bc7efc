"""``ModelPost`` keeps the rules the ``openai`` client documents for every model call: its headers and
our body, its retries (statuses, ``x-should-retry``, ``Retry-After``), its exception for each failure; and
over our transport (``http_transport``) a refused connection is not a timeout and no cookie
goes back. Every case runs against one scripted endpoint."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
import pytest
from aiohttp import web

from kbcore.models.http_transport import model_http_client
from kbcore.models.model_post import ModelPost

BODY = {"model": "m", "messages": [{"role": "user", "content": "云岭县医院几点开门？"}], "temperature": 0}
OK = (200, {"content-type": "application/json"}, json.dumps({"choices": [{"message": {"content": "八点"}}]}))
SOON = {"retry-after-ms": "1"}  # retries without the client's half-second backoff


@dataclass
class Endpoint:
    """Answers each POST with the next scripted reply; records what it was sent (header names in lower case)."""

    replies: list[tuple[int, dict[str, str], str]] = field(default_factory=list)
    seen: list[tuple[dict[str, str], Any]] = field(default_factory=list)
    base_url: str = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append(({k.lower(): v for k, v in request.headers.items()}, json.loads(await request.read())))
        status, headers, text = self.replies.pop(0) if self.replies else OK
        return web.Response(status=status, headers=headers, text=text)


@pytest.fixture
async def endpoint() -> AsyncIterator[Endpoint]:
    scripted = Endpoint()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", scripted.handle)
    app.router.add_post("/v2/chat/completions", scripted.handle)  # where a redirect may send it
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    scripted.base_url = f"http://127.0.0.1:{port}/v1"
    yield scripted
    await runner.cleanup()


Send = Callable[[], Awaitable[httpx2.Response]]


@dataclass
class Caller:
    """What the model clients build: the SDK's client on our HTTP client, and the post through both."""

    client: openai.AsyncOpenAI
    send: Send


def _caller(base_url: str, max_retries: int = 2, timeout: float = 5.0) -> Caller:
    http = model_http_client()
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="sk-test", max_retries=max_retries, timeout=timeout, http_client=http
    )
    post = ModelPost(client, http).post
    return Caller(client, lambda: post("/chat/completions", BODY))


@pytest.fixture
async def send(endpoint: Endpoint) -> AsyncIterator[Send]:
    caller = _caller(endpoint.base_url)
    yield caller.send
    await caller.client.close()


async def test_the_request_carries_the_clients_headers_and_the_body(endpoint: Endpoint, send: Send) -> None:
    response = await send()
    assert json.loads(response.content)["choices"][0]["message"]["content"] == "八点"
    headers, body = endpoint.seen[0]
    assert body == BODY
    assert headers["authorization"] == "Bearer sk-test"
    assert headers["user-agent"].startswith("AsyncOpenAI/Python")
    assert headers["content-type"] == "application/json"
    assert headers["x-stainless-retry-count"] == "0"


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503])
async def test_a_retryable_status_is_retried_then_the_answer_is_returned(
    endpoint: Endpoint, send: Send, status: int
) -> None:
    endpoint.replies = [(status, SOON, "busy"), (status, SOON, "busy"), OK]
    response = await send()
    assert response.status_code == 200
    assert [h["x-stainless-retry-count"] for h, _ in endpoint.seen] == ["0", "1", "2"]


async def test_retries_run_out_into_the_status_error_of_the_last_answer(endpoint: Endpoint, send: Send) -> None:
    endpoint.replies = [(503, SOON, '{"error": {"message": "overloaded"}}')] * 3
    with pytest.raises(openai.InternalServerError) as caught:
        await send()
    assert caught.value.status_code == 503
    assert "overloaded" in caught.value.message
    assert len(endpoint.seen) == 3


async def test_the_server_saying_do_not_retry_is_obeyed(endpoint: Endpoint, send: Send) -> None:
    endpoint.replies = [(503, {"x-should-retry": "false"}, "no")]
    with pytest.raises(openai.InternalServerError):
        await send()
    assert len(endpoint.seen) == 1


async def test_a_client_error_is_raised_at_once_as_its_own_class(endpoint: Endpoint, send: Send) -> None:
    error = {"error": {"message": "Unrecognized request argument supplied: thinking", "type": "invalid_request_error"}}
    endpoint.replies = [(400, {"content-type": "application/json"}, json.dumps(error))]
    with pytest.raises(openai.BadRequestError) as caught:
        await send()
    assert caught.value.body == error["error"]
    assert len(endpoint.seen) == 1


async def test_a_status_error_is_the_sdks_class_with_the_endpoints_words(endpoint: Endpoint) -> None:
    caller = _caller(endpoint.base_url, max_retries=0)
    endpoint.replies = [(429, {"content-type": "application/json"}, '{"error": {"message": "slow down"}}')]
    with pytest.raises(openai.RateLimitError) as caught:
        await caller.send()
    await caller.client.close()
    assert caught.value.body == {"message": "slow down"}
    assert "slow down" in caught.value.message


async def test_a_redirect_is_followed_with_the_body(endpoint: Endpoint, send: Send) -> None:
    endpoint.replies = [(307, {"location": "/v2/chat/completions"}, ""), OK]
    response = await send()
    assert response.status_code == 200
    assert json.loads(response.content)["choices"][0]["message"]["content"] == "八点"
    assert [body for _, body in endpoint.seen] == [BODY, BODY]
    assert str(response.request.url).endswith("/v2/chat/completions")


async def test_a_cookie_the_endpoint_sets_is_not_sent_back(endpoint: Endpoint) -> None:
    """One client serves every chat: a cookie from one caller's answer must not go out with the next."""
    caller = _caller(endpoint.base_url)
    endpoint.replies = [(200, {**OK[1], "set-cookie": "session=one-caller; Path=/"}, OK[2]), OK]
    post = caller.send
    await post()
    await post()
    await caller.client.close()
    assert [headers.get("cookie") for headers, _ in endpoint.seen] == [None, None]


def _refusing_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_an_endpoint_that_is_down_is_a_connection_error() -> None:
    caller = _caller(f"http://127.0.0.1:{_refusing_port()}/v1", max_retries=1)
    with pytest.raises(openai.APIConnectionError) as caught:
        await caller.send()
    await caller.client.close()
    assert not isinstance(caught.value, openai.APITimeoutError)


async def test_an_endpoint_that_never_answers_is_a_timeout() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        caller = _caller(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", max_retries=0, timeout=0.3)
        with pytest.raises(openai.APITimeoutError):
            await caller.send()
        await caller.client.close()
