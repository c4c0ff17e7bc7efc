"""The aiohttp transport under the openai SDK keeps what httpx2's own transport did for us: a
refused connection is a connect error (an endpoint that is down is not reported as slow), and
the proxy variables are honoured (a deployment that reaches its provider through a proxy)."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
from pathlib import Path

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


class AnsweringServer:
    """A plain-HTTP server that answers every request with ``COMPLETION`` and keeps each
    request's head: as a forward proxy its request line names the absolute URL the client
    wanted, as the endpoint itself only the path."""

    def __init__(self) -> None:
        self.heads: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    @property
    def request_lines(self) -> list[str]:
        return [head.split("\r\n", 1)[0] for head in self.heads]

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        self.heads.append(head)
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

    async def __aenter__(self) -> AnsweringServer:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


def _only_http_proxy(monkeypatch: pytest.MonkeyPatch, proxy_url: str) -> None:
    for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy_url)
    monkeypatch.setenv("http_proxy", proxy_url)


async def _ask(base_url: str) -> str | None:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0, http_client=model_http_client())
    try:
        reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "你好"}])
    finally:
        await client.close()
    return reply.choices[0].message.content


async def test_requests_go_through_the_proxy_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    async with AnsweringServer() as proxy:
        _only_http_proxy(monkeypatch, f"http://127.0.0.1:{proxy.port}")
        unreachable = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: only the proxy can answer
        assert await _ask(unreachable) == "经代理"
        assert await _ask(unreachable) == "经代理"  # the second request too (the lookup is kept)
    assert proxy.request_lines == [f"POST {unreachable}/chat/completions HTTP/1.1"] * 2


async def test_credentials_in_the_proxy_url_are_sent_to_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    async with AnsweringServer() as proxy:
        _only_http_proxy(monkeypatch, f"http://someone:secret@127.0.0.1:{proxy.port}")
        assert await _ask(f"http://127.0.0.1:{free_port()}/v1") == "经代理"
    [head] = proxy.heads
    expected = "proxy-authorization: basic " + base64.b64encode(b"someone:secret").decode().lower()
    assert expected in head.lower().split("\r\n")


async def test_a_host_no_proxy_names_is_called_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    async with AnsweringServer() as endpoint:
        _only_http_proxy(monkeypatch, f"http://127.0.0.1:{free_port()}")  # a proxy that is down
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        monkeypatch.setenv("no_proxy", "127.0.0.1")
        assert await _ask(f"http://127.0.0.1:{endpoint.port}/v1") == "经代理"
    assert endpoint.request_lines == ["POST /v1/chat/completions HTTP/1.1"]


async def test_a_netrc_entry_for_the_endpoint_does_not_replace_the_api_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """aiohttp's ``trust_env`` would add the netrc login to a request that already carries the
    SDK's ``Authorization`` header, and refuse to send it."""
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login someone password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with AnsweringServer() as endpoint:
        assert await _ask(f"http://127.0.0.1:{endpoint.port}/v1") == "经代理"
    [head] = endpoint.heads
    assert "authorization: bearer k" in head.lower().split("\r\n")
