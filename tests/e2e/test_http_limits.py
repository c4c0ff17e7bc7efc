"""The gateway's HTTP limits at the edge (header size, header count, header time, connections
in all and per address), against the real gateway: its app served by the same uvicorn config
``python -m gateway`` builds (``http_config``: uvloop, the edge protocol), on a thread, with
small limits set per test; clients are raw sockets, so what goes over the wire is exactly what a
test sends. Another client address is 127.0.0.2 (all of 127/8 is loopback on Linux).

The app's backends point nowhere: every request here is answered by the edge or by a static
route, so no database is involved."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
import uvicorn

from gateway.app import create_app
from gateway.edge.connection_book import ConnectionBook
from gateway.edge.listen import bind_http_socket
from gateway.edge.protocol import EdgeHttpProtocol
from gateway.edge.server_config import http_config
from kbcore.settings import Settings
from kbcore.words.said import said
from tests.eventually import eventually

pytestmark = pytest.mark.own_database  # no database: the backends point nowhere

MiB = 1024 * 1024
DEADLINE = 20.0  # seconds any one wait may take on a loaded machine before the test fails
NOWHERE = "127.0.0.1:9"
STATIC_ROUTE = "/ui/labels.json"  # answered by the gateway alone


@dataclass
class Gateway:
    port: int
    book: ConnectionBook


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@asynccontextmanager
async def edge_gateway(folder: Path, **limits: Any) -> AsyncIterator[Gateway]:
    """The gateway app on ``http_config`` with ``limits`` (Settings fields), run by uvicorn on
    a thread of its own, as ``python -m gateway`` runs it (uvloop), until the block ends."""
    settings = Settings(
        data_dir=folder, chat_target=NOWHERE, retrieval_target=NOWHERE, context_target=NOWHERE, **limits
    )
    config = http_config(create_app(settings), settings, log_level="warning", access_log=False, log_config=None)
    protocol = cast(type[EdgeHttpProtocol], config.http)
    sock = bind_http_socket("127.0.0.1", 0)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="edge-gateway", daemon=True)
    thread.start()
    try:
        await eventually(lambda: server.started or not thread.is_alive(), timeout=DEADLINE)
        assert thread.is_alive(), "the gateway did not start"
        yield Gateway(sock.getsockname()[1], protocol.edge_book)
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 15)
        if thread.is_alive():
            server.force_exit = True
            await asyncio.to_thread(thread.join, 15)
        sock.close()


class Client:
    """A raw TCP client, so what goes over the wire is exactly what a test sends, and what the
    server sent before it closed stays readable even after a reset (the kernel keeps it; a
    stream library would drop it on the first failed write)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    @classmethod
    async def connect(cls, gateway: Gateway, source: str = "127.0.0.1") -> Client:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.bind((source, 0))
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", gateway.port))
        return cls(sock)

    async def send(self, data: bytes) -> bool:
        """Send ``data``; False if the server had closed the connection."""
        try:
            await asyncio.get_running_loop().sock_sendall(self.sock, data)
            return True
        except (ConnectionResetError, BrokenPipeError):
            return False

    def something_arrived(self) -> bool:
        """Whether the server has sent anything (or closed), without waiting."""
        try:
            self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            return True
        except BlockingIOError:
            return False
        except ConnectionResetError:
            return True

    async def _more(self) -> bytes:
        """The next bytes from the server; b"" once it has closed (end of stream, or a reset)."""
        try:
            async with asyncio.timeout(DEADLINE):
                return await asyncio.get_running_loop().sock_recv(self.sock, 65536)
        except ConnectionResetError:
            return b""

    async def answer(self) -> Answer:
        """One response: status, headers and a Content-Length body (every answer here has one)."""
        while b"\r\n\r\n" not in self.buffer:
            more = await self._more()
            assert more, f"the connection closed before a whole answer: {self.buffer!r}"
            self.buffer += more
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {name.lower(): value for name, value in (line.split(": ", 1) for line in header_lines)}
        length = int(headers["content-length"])
        while len(rest) < length:
            more = await self._more()
            assert more, "the connection closed within the answer's body"
            rest += more
        self.buffer = rest[length:]
        return Answer(int(status_line.split()[1]), headers, rest[:length])

    async def closed_by_server(self) -> bool:
        return not self.buffer and await self._more() == b""

    def close(self) -> None:
        self.sock.close()

    def reset(self) -> None:
        """Close with a TCP reset instead of a FIN (SO_LINGER 0), as a crashed client would."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


def request(path: str = STATIC_ROUTE, method: str = "GET", headers: dict[str, str] | None = None) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


HALF_REQUEST = b"GET " + STATIC_ROUTE.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"


async def ask(gateway: Gateway, source: str = "127.0.0.1", wire: bytes | None = None) -> Answer:
    """A whole request on a connection of its own from ``source``, as a client sends it (even
    if the server has answered already)."""
    client = await Client.connect(gateway, source)
    try:
        await client.send(wire or request())
        return await client.answer()
    finally:
        client.close()


async def held_open(gateway: Gateway, count: int, source: str = "127.0.0.1") -> list[Client]:
    """``count`` connections from ``source``, each partway through a request's headers."""
    held = [await Client.connect(gateway, source) for _ in range(count)]
    for client in held:
        assert await client.send(HALF_REQUEST)
    return held


async def send_slowly(client: Client, head: bytes, total: int, piece: int) -> int:
    """Send ``head`` then ``total`` bytes of one header value in ``piece``-byte chunks until the
    server answers or closes; how many value bytes went out."""
    sent = 0
    await client.send(head)
    while sent < total and not client.something_arrived():
        if not await client.send(b"a" * piece):
            break
        sent += piece
        await asyncio.sleep(0.005)
    return sent


# Requests within the limits ----------------------------------------------------------------


async def test_a_request_and_a_kept_alive_second_request_are_answered(tmp_path: Path) -> None:
    async with edge_gateway(tmp_path, http_max_header_kb=8, http_max_headers=10) as gateway:
        client = await Client.connect(gateway)
        await client.send(request(headers={f"X-Fine-{n}": "v" * 500 for n in range(9)}))  # 10 headers, 4.6 KiB
        first = await client.answer()
        assert first.status == 200, first.body
        assert first.headers.get("connection") != "close"
        await client.send(request())
        second = await client.answer()
        assert second.status == 200 and second.body == first.body
        assert gateway.book.open == 1
        client.close()
        await eventually(lambda: gateway.book.open, lambda n: n == 0, timeout=DEADLINE, what="the connection's release")


# Header size and count ---------------------------------------------------------------------


async def test_headers_over_the_size_limit_get_431_before_the_rest_is_sent(tmp_path: Path) -> None:
    """A 2 MiB header against an 8 KiB limit, sent in 16 KiB pieces: the 431 arrives while
    most of it is still unsent, and the server has closed the connection."""
    async with edge_gateway(tmp_path, http_max_header_kb=8) as gateway:
        client = await Client.connect(gateway)
        sent = await send_slowly(client, HALF_REQUEST + b"X-Big: ", 2 * MiB, 16 * 1024)
        assert sent < MiB, f"nothing came back before {sent} bytes were sent"
        answer = await client.answer()
        assert answer.status == 431
        assert answer.headers["connection"] == "close"
        assert answer.headers["content-type"] == "application/json"
        body = answer.json()
        assert body["code"] == 431 and body["data"] is None and "8 KiB" in body["message"]
        assert await client.closed_by_server()
        client.close()
        await eventually(lambda: gateway.book.open, lambda n: n == 0, timeout=DEADLINE, what="the connection's release")


async def test_an_oversized_request_line_on_the_openai_path_gets_openais_error_shape(tmp_path: Path) -> None:
    async with edge_gateway(tmp_path, http_max_header_kb=8) as gateway:
        big = request("/v1/chat/completions", "POST", {"Authorization": "Bearer " + "k" * 9000})
        answer = await ask(gateway, wire=big)
        assert answer.status == 431
        error = answer.json()["error"]
        assert error["type"] == "invalid_request_error" and "8 KiB" in error["message"]


async def test_too_many_headers_get_431(tmp_path: Path) -> None:
    async with edge_gateway(tmp_path, http_max_headers=10) as gateway:
        client = await Client.connect(gateway)
        await client.send(request(headers={f"X-H{n}": "1" for n in range(12)}))  # Host + 12
        answer = await client.answer()
        assert answer.status == 431
        assert answer.json() == {
            "code": 431,
            # Refused before the headers are read: in the default language, Chinese.
            "message": said("request_has_more_headers_server_accepts", self_edge_max_headers=10).render("zh"),
            "data": None,
        }
        assert await client.closed_by_server()
        client.close()


# Header time -------------------------------------------------------------------------------


async def test_a_client_that_stops_mid_header_gets_408_and_is_closed(tmp_path: Path) -> None:
    async with edge_gateway(tmp_path, http_header_timeout=0.5) as gateway:
        stalled = await Client.connect(gateway)
        await stalled.send(HALF_REQUEST + b"X-Half")
        silent = await Client.connect(gateway)  # connects and sends nothing at all
        for client in (stalled, silent):
            answer = await client.answer()
            assert answer.status == 408
            words = said("request_headers_did_not_arrive_within", seconds=0.5).render("zh")
            assert answer.json()["message"] == words and "0.5" in words
            assert answer.headers["connection"] == "close"
            assert await client.closed_by_server()
            client.close()
        await eventually(lambda: gateway.book.open, lambda n: n == 0, timeout=DEADLINE, what="the connections' release")


async def test_a_kept_alive_connection_gets_the_header_time_again_for_its_next_request(tmp_path: Path) -> None:
    """The clock starts again at the next request's first byte: an idle kept-alive connection
    is not timed out by it (that is the keep-alive timeout's job), a stalled next request is."""
    async with edge_gateway(tmp_path, http_header_timeout=0.15, http_keep_alive=30) as gateway:
        client = await Client.connect(gateway)
        await client.send(request())
        assert (await client.answer()).status == 200
        await asyncio.sleep(0.2)  # idle past the header time: no 408 for a request not begun
        await client.send(request())
        assert (await client.answer()).status == 200
        await client.send(b"GET " + STATIC_ROUTE.encode() + b" HT")
        answer = await client.answer()
        assert answer.status == 408
        assert await client.closed_by_server()
        client.close()


async def test_a_kept_alive_next_request_over_the_size_limit_gets_431(tmp_path: Path) -> None:
    async with edge_gateway(tmp_path, http_max_header_kb=8) as gateway:
        client = await Client.connect(gateway)
        await client.send(request())
        assert (await client.answer()).status == 200
        await client.send(request(headers={"X-Big": "b" * (9 * 1024)}))
        assert (await client.answer()).status == 431
        assert await client.closed_by_server()
        client.close()


# Connections -------------------------------------------------------------------------------


async def test_connections_over_the_per_address_cap_get_503_while_another_address_is_answered(
    tmp_path: Path,
) -> None:
    async with edge_gateway(tmp_path, http_max_connections_per_ip=3, http_header_timeout=60) as gateway:
        held = await held_open(gateway, 3)
        await eventually(
            lambda: gateway.book.open_from("127.0.0.1"),
            lambda n: n == 3,
            timeout=DEADLINE,
            what="three open connections",
        )
        refused = await ask(gateway)
        assert refused.status == 503
        assert refused.headers["connection"] == "close" and refused.headers["retry-after"] == "5"
        assert refused.json()["message"] == said("too_many_open_connections_your_address", per_address=3).render("zh")
        assert (await ask(gateway, "127.0.0.2")).status == 200
        assert gateway.book.open_from("127.0.0.1") == 3
        for client in held:
            client.close()


async def test_connections_over_the_total_cap_get_503(tmp_path: Path) -> None:
    async with edge_gateway(
        tmp_path, http_max_connections=4, http_max_connections_per_ip=0, http_header_timeout=60
    ) as gateway:
        held = await held_open(gateway, 2, "127.0.0.1") + await held_open(gateway, 2, "127.0.0.2")
        await eventually(lambda: gateway.book.open, lambda n: n == 4, timeout=DEADLINE, what="four open connections")
        for source in ("127.0.0.1", "127.0.0.3"):
            refused = await ask(gateway, source)
            assert refused.status == 503
            assert refused.json()["message"] == said("server_holds_many_connections_can_right").render("zh")
        held.pop().close()
        await eventually(
            lambda: gateway.book.open, lambda n: n == 3, timeout=DEADLINE, what="the closed connection's release"
        )
        assert (await ask(gateway, "127.0.0.3")).status == 200
        for client in held:
            client.close()


async def test_counts_go_back_down_however_connections_end(tmp_path: Path) -> None:
    """Closed by the client (FIN or reset) or by the server (431, a response with ``Connection:
    close``): each releases its place, and the address is admitted again. (After a 408: the
    header-time test.)"""
    limits = {"http_max_connections_per_ip": 4, "http_header_timeout": 60, "http_max_headers": 10}
    async with edge_gateway(tmp_path, **limits) as gateway:
        first = await held_open(gateway, 4)
        fin, reset_by_client, too_many, answered = first
        await eventually(
            lambda: gateway.book.open_from("127.0.0.1"),
            lambda n: n == 4,
            timeout=DEADLINE,
            what="four open connections",
        )
        assert (await ask(gateway)).status == 503

        fin.close()
        reset_by_client.reset()
        await too_many.send(b"".join(b"X-H%d: 1\r\n" % n for n in range(12)))
        assert (await too_many.answer()).status == 431
        await answered.send(b"Connection: close\r\n\r\n")
        assert (await answered.answer()).status == 200
        assert await answered.closed_by_server()
        await eventually(
            lambda: gateway.book.open, lambda n: n == 0, timeout=DEADLINE, what="every connection's release"
        )
        assert gateway.book.open_from("127.0.0.1") == 0

        again = await held_open(gateway, 4)
        await eventually(
            lambda: gateway.book.open_from("127.0.0.1"),
            lambda n: n == 4,
            timeout=DEADLINE,
            what="four connections admitted again",
        )
        assert (await ask(gateway)).status == 503
        for client in (too_many, answered, *again):
            client.close()


async def test_bytes_between_requests_start_the_header_time_too(tmp_path: Path) -> None:
    """Line breaks after an answer begin no request in the parser, yet they are not idleness
    either: without a clock on them a client could hold the connection by sending one now and
    then (uvicorn's keep-alive timer stops at any byte)."""
    async with edge_gateway(tmp_path, http_header_timeout=0.15, http_keep_alive=600) as gateway:
        client = await Client.connect(gateway)
        await client.send(request())
        assert (await client.answer()).status == 200
        await client.send(b"\r\n")
        answer = await client.answer()
        assert answer.status == 408
        assert await client.closed_by_server()
        client.close()
