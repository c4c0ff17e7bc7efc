"""The aiohttp transport under the openai SDK keeps what httpx2's own transport did for us: a
refused connection is a connect error (an endpoint that is down is not reported as slow), and
the proxy variables are honoured (a deployment that reaches its provider through a proxy)."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx2
import openai
import pytest

from kbcore.models.http_transport import model_http_client

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "经代理"}, "finish_reason": "stop"}],
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_refused_connection_is_a_connect_error_not_a_timeout() -> None:
    async with model_http_client() as client:
        with pytest.raises(httpx2.ConnectError) as caught:
            await client.post(f"http://127.0.0.1:{free_port()}/v1/chat/completions", json={})
    assert not isinstance(caught.value, httpx2.TimeoutException)


async def test_requests_go_through_the_proxy_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    request_lines: list[str] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A forward proxy for plain HTTP that answers itself: the request line names the
        absolute URL the client wanted."""
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        request_lines.append(head.split("\r\n", 1)[0])
        length = next(
            int(line.split(":")[1]) for line in head.split("\r\n") if line.lower().startswith("content-length")
        )
        await reader.readexactly(length)
        body = json.dumps(COMPLETION).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(proxy, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{port}")
    unreachable = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: only the proxy can answer
    client = openai.AsyncOpenAI(base_url=unreachable, api_key="k", max_retries=0, http_client=model_http_client())
    try:
        reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "你好"}])
    finally:
        await client.close()
        server.close()
        await server.wait_closed()
    assert reply.choices[0].message.content == "经代理"
    assert request_lines == [f"POST {unreachable}/chat/completions HTTP/1.1"]
