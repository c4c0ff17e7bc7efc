"""The gateway's HTTP limits at the edge against the attacks that called for them, on the real
stack (``running_stack``: every process, the sample knowledge base, default settings):

1. **A 128 MiB request header** with no sign-in (once, then four at once): the status, how much
   of it went out before the answer, and the gateway's peak RSS (VmHWM, its whole life).
   Before the limits: 200, 338 MB; 757 MB for four at once.
2. **20,000 slow-header connections from 127.0.0.1**, from two client processes (10,000
   descriptors each: the hard open-file limit is 20,000 per process), each sending half a
   request and a header line every few seconds, and reopening a connection the gateway closed
   (503 at once past the per-address cap, 408 after the header time) five seconds later: the
   attack kept up. Meanwhile requests from 127.0.0.2 (``GET /api/application`` with the operator
   token: the operator's list, through the chat service) on fresh connections, timed: how many are answered, p50
   and p95; and the gateway's RSS and open descriptors, sampled. Before the limits the
   gateway ran out of descriptors and reset every new connection.
3. **The protocol's CPU per request**: a bare ASGI app served by uvicorn's httptools protocol
   and by the edge protocol (``http_config``), 20,000 keep-alive requests with ten headers each,
   the server process's CPU from ``/proc``: what the limits cost a request within them.

``python -m bench.http_limits`` runs this section alone; its ``flood`` and ``serve`` commands
are the client and server processes it starts."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import uvicorn
import uvloop
from starlette.types import Receive, Scope, Send

from bench.processes import ROOT, announced_process, running_stack
from bench.table import Row, median, ms, percentile, run_alone
from gateway.edge.descriptors import raise_descriptor_limit
from gateway.edge.server_config import http_config
from kbcore.settings import Settings

SECTION = "http limits"
MiB = 1024 * 1024
BIG_HEADER = 128 * MiB
TARGET_RSS_MB = 150.0
FLOOD_CLIENTS = 2
FLOOD_PER_CLIENT = 10_000
FLOOD_REOPEN_SECONDS = 5.0  # a closed connection is opened again this long after
FLOOD_MEASURE_SECONDS = 25.0  # over two header timeouts (10 s): refusals and reopenings both seen
PROBE_PATH = "/api/application"
PROBE_GAP_SECONDS = 0.05
CPU_REQUESTS = 20_000
CPU_CONNECTIONS = 8
STATIC_PATH = "/ui/labels.json"


# Figures of the gateway process ------------------------------------------------------------


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MB (10^6 bytes)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024 / 1e6
    return fields["VmRSS"], fields["VmHWM"]


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# 1. One huge header --------------------------------------------------------------------------


def answer_waiting(sock: socket.socket) -> bool:
    """Whether the server has sent something (or closed), without waiting."""
    try:
        sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        return True
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


async def send_big_header(port: int, size: int) -> tuple[int | None, int]:
    """Send a request whose one header is ``size`` bytes, 1 MiB at a time, until the gateway
    answers; the status (None: closed without one) and how many bytes the client had written.

    A raw socket: the gateway closes without reading the rest, so the client's next write
    fails with a reset, and a stream library would drop the answer the kernel still holds."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    piece, sent = b"a" * MiB, 0
    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        await loop.sock_sendall(sock, f"GET {STATIC_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ".encode())
        while sent < size and not answer_waiting(sock):
            await loop.sock_sendall(sock, piece)
            sent += len(piece)
        if sent >= size:
            await loop.sock_sendall(sock, b"\r\n\r\n")
    except (ConnectionResetError, BrokenPipeError):
        pass  # closed by the gateway: its answer is still to be read
    try:
        async with asyncio.timeout(60):
            first = await loop.sock_recv(sock, 4096)
    except (ConnectionResetError, TimeoutError):
        first = b""
    finally:
        sock.close()
    return (int(first.split()[1]) if first.startswith(b"HTTP/1.1 ") else None), sent


# 2. Slow headers from one address, timed requests from another -------------------------------


async def probe(url: str, source: str, token: str) -> float | None:
    """Seconds for one ``GET PROBE_PATH`` on a fresh connection from ``source``, presenting the
    operator ``token``; None unless 200."""
    parts = urlsplit(url)
    started = time.perf_counter()
    try:
        async with asyncio.timeout(30):
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port, local_addr=(source, 0))
            try:
                head = f"GET {PROBE_PATH} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
                writer.write(f"{head}Connection: close\r\n\r\n".encode())
                status = int((await reader.readuntil(b"\r\n")).split()[1])
                await reader.read()  # the whole answer, to the gateway's close
            finally:
                writer.close()
    except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError):
        return None
    return time.perf_counter() - started if status == 200 else None


class SlowHeader(asyncio.Protocol):
    """One attacking connection: half a request, then a header line whenever asked."""

    def __init__(self, seen: Counter[str]) -> None:
        self.seen = seen
        self.transport: asyncio.Transport | None = None
        self.answered = False
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is one, though not a subclass
        self.transport.write(f"GET {STATIC_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())

    def data_received(self, data: bytes) -> None:
        if not self.answered and data.startswith(b"HTTP/1.1 "):
            self.answered = True
            self.seen[f"answered {data[9:12].decode()}"] += 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.answered:
            self.seen["closed without an answer"] += 1

    def trickle(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.write(b"X-Slow: 1\r\n")


async def flood(port: int, count: int) -> dict[str, Any]:
    """Hold ``count`` slow-header connections to ``port`` until stdin closes; print ``READY``
    once all were attempted; what the connections saw."""
    loop = asyncio.get_running_loop()
    seen: Counter[str] = Counter()
    slots: list[SlowHeader | None] = [None] * count
    gate = asyncio.Semaphore(256)  # connects in flight at once
    peak_open = 0

    async def open_slot(index: int) -> None:
        async with gate:
            try:
                _, protocol = await loop.create_connection(lambda: SlowHeader(seen), "127.0.0.1", port)
            except OSError:
                seen["connect failed"] += 1
                return
            seen["connected"] += 1
            slots[index] = protocol

    await asyncio.gather(*(open_slot(i) for i in range(count)))
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    stdin_closed = asyncio.ensure_future(asyncio.to_thread(sys.stdin.read))
    while not stdin_closed.done():
        await asyncio.wait([stdin_closed], timeout=FLOOD_REOPEN_SECONDS)
        peak_open = max(peak_open, sum(1 for s in slots if s is not None and not s.closed))
        for slot in slots:
            if slot is not None:
                slot.trickle()
        if not stdin_closed.done():
            await asyncio.gather(*(open_slot(i) for i, s in enumerate(slots) if s is None or s.closed))
    return {**seen, "open at the end": sum(1 for s in slots if s is not None and not s.closed), "peak open": peak_open}


@contextlib.contextmanager
def flood_clients(port: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """FLOOD_CLIENTS processes of ``flood``, each once READY; closing their stdin stops them."""
    argv = [sys.executable, "-m", "bench.http_limits", "flood", "--port", str(port), "--count", str(FLOOD_PER_CLIENT)]
    clients = [
        subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE) for _ in range(FLOOD_CLIENTS)
    ]
    try:
        for client in clients:
            assert client.stdout is not None
            line = client.stdout.readline()
            if line.strip() != b"READY":
                raise RuntimeError(f"a flood client did not start: {line!r}")
        yield clients
    finally:
        for client in clients:
            if client.poll() is None:
                client.kill()
                client.wait()


def flood_results(clients: list[subprocess.Popen[bytes]]) -> Counter[str]:
    """Stop the clients; what their connections saw, summed."""
    total: Counter[str] = Counter()
    for client in clients:
        assert client.stdin is not None and client.stdout is not None
        client.stdin.close()  # the signal to stop
        out = client.stdout.read()
        client.wait(timeout=120)
        total.update(json.loads(out.decode().strip().splitlines()[-1]))
    return total


async def probes_while(url: str, token: str, seconds: float, pid: int) -> tuple[list[float | None], dict[str, float]]:
    """Timed probes from 127.0.0.2 for ``seconds``, the gateway sampled between them."""
    results: list[float | None] = []
    peaks = {"rss_mb": 0.0, "descriptors": 0.0}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        results.append(await probe(url, "127.0.0.2", token))
        rss, _ = memory_mb(pid)
        peaks["rss_mb"] = max(peaks["rss_mb"], rss)
        peaks["descriptors"] = max(peaks["descriptors"], open_descriptors(pid))
        await asyncio.sleep(PROBE_GAP_SECONDS)
    return results, peaks


def latency_summary(results: list[float | None]) -> tuple[int, str]:
    answered = [r for r in results if r is not None]
    if not answered:
        return 0, "none answered"
    return len(answered), f"p50 {ms(median(answered))}, p95 {ms(percentile(answered, 0.95))}"


# 3. CPU per request of the two protocols ---------------------------------------------------


async def hello(scope: Scope, receive: Receive, send: Send) -> None:
    """The bare ASGI app of the CPU comparison: 200 ``ok``."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def serve(protocol: str) -> None:
    """Serve ``hello`` with uvicorn's httptools protocol (``plain``) or the gateway's (``edge``),
    otherwise alike; print ``PORT <n>``."""
    from gateway.edge.listen import bind_http_socket

    options: dict[str, Any] = {"log_level": "warning", "access_log": False, "lifespan": "off", "log_config": None}
    if protocol == "edge":
        config = http_config(hello, Settings(), **options)
    else:
        config = uvicorn.Config(hello, loop="uvloop", http="httptools", ws="none", **options)
    sock = bind_http_socket("127.0.0.1", 0)
    sock.listen(1024)
    sys.stdout.write(f"PORT {sock.getsockname()[1]}\n")
    sys.stdout.flush()
    uvicorn.Server(config).run(sockets=[sock])


BROWSER_LIKE = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0\r\n"
    b"Accept: application/json\r\nAccept-Language: zh-CN,zh;q=0.9,en;q=0.8\r\nAccept-Encoding: gzip, deflate\r\n"
    b"Connection: keep-alive\r\nReferer: http://127.0.0.1/ui/admin\r\nCookie: theme=light\r\n"
    b"Authorization: Bearer application-0123456789abcdef\r\nCache-Control: no-cache\r\n\r\n"
)


async def keep_alive_requests(port: int, count: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for _ in range(count):
            writer.write(BROWSER_LIKE)
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head
            await reader.readexactly(2)
    finally:
        writer.close()


async def cpu_us_per_request(protocol: str) -> float:
    argv = [sys.executable, "-m", "bench.http_limits", "serve", "--protocol", protocol]
    async with announced_process(argv, f"the {protocol} server") as (process, port):
        each = CPU_REQUESTS // CPU_CONNECTIONS
        await asyncio.gather(*(keep_alive_requests(port, each // 10) for _ in range(CPU_CONNECTIONS)))  # warm-up
        before = cpu_seconds(process.pid)
        await asyncio.gather(*(keep_alive_requests(port, each) for _ in range(CPU_CONNECTIONS)))
        return (cpu_seconds(process.pid) - before) * 1e6 / (each * CPU_CONNECTIONS)


# The section -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def gateway_of_the_stack() -> AsyncIterator[tuple[str, str, int]]:
    """The gateway's URL, the operator token its probes present, and its pid."""
    async with running_stack({}) as (info, _):
        yield str(info["url"]), str(info["operator_token"]), int(info["pids"]["gateway"])


async def run() -> tuple[list[Row], dict[str, Any]]:
    raw: dict[str, Any] = {}
    async with gateway_of_the_stack() as (url, token, pid):
        port = urlsplit(url).port or 80
        raw["start_mb"] = memory_mb(pid)
        one = await send_big_header(port, BIG_HEADER)
        raw["big_header"] = {"status": one[0], "sent_bytes": one[1], "mb": memory_mb(pid)}
        four = await asyncio.gather(*(send_big_header(port, BIG_HEADER) for _ in range(4)))
        raw["four_big_headers"] = {"statuses": [s for s, _ in four], "mb": memory_mb(pid)}

        baseline, _ = await probes_while(url, token, 3.0, pid)
        with flood_clients(port) as clients:
            during, peaks = await probes_while(url, token, FLOOD_MEASURE_SECONDS, pid)
            seen = flood_results(clients)
        raw["flood"] = {"seen": dict(seen), "peaks": peaks, "after_mb": memory_mb(pid)}
        raw["probes"] = {"baseline": baseline, "during": during}

    plain = [await cpu_us_per_request("plain"), await cpu_us_per_request("edge")]
    again = [await cpu_us_per_request("plain"), await cpu_us_per_request("edge")]
    cpu = {"plain": median([plain[0], again[0]]), "edge": median([plain[1], again[1]])}
    raw["cpu_us_per_request"] = {"plain": [plain[0], again[0]], "edge": [plain[1], again[1]]}
    return rows(raw, cpu), raw


def rows(raw: dict[str, Any], cpu: dict[str, float]) -> list[Row]:
    big, four, flood_raw = raw["big_header"], raw["four_big_headers"], raw["flood"]
    peak_mb = four["mb"][1]
    answered, latency = latency_summary(raw["probes"]["during"])
    _, baseline = latency_summary(raw["probes"]["baseline"])
    seen = flood_raw["seen"]
    attack = ", ".join(f"{name} {count}" for name, count in sorted(seen.items()))
    return [
        Row(
            SECTION,
            f"a 128 MiB header, no sign-in: status (the client had written {big['sent_bytes'] // MiB} MiB when it came)",
            str(big["status"]),
            "431",
            big["status"] == 431,
        ),
        Row(
            SECTION,
            f"gateway peak RSS after one and then four 128 MiB headers (statuses {four['statuses']}; "
            f"RSS at start {raw['start_mb'][0]:.0f} MB)",
            f"{peak_mb:.0f} MB",
            f"< {TARGET_RSS_MB:.0f} MB",
            peak_mb < TARGET_RSS_MB and all(s == 431 for s in four["statuses"]),
        ),
        Row(
            SECTION,
            f"during {FLOOD_CLIENTS * FLOOD_PER_CLIENT} slow-header connections from 127.0.0.1 "
            f"({FLOOD_MEASURE_SECONDS:.0f} s): requests from 127.0.0.2 answered",
            f"{answered} of {len(raw['probes']['during'])}",
            "all",
            answered == len(raw["probes"]["during"]),
        ),
        Row(SECTION, f"… their latency (without the attack: {baseline})", latency),
        Row(
            SECTION,
            "… the gateway's RSS and open descriptors, highest sampled",
            f"{flood_raw['peaks']['rss_mb']:.0f} MB, {flood_raw['peaks']['descriptors']:.0f} descriptors",
        ),
        Row(SECTION, "… what the attacking connections saw (both clients)", attack),
        Row(
            SECTION,
            f"CPU per keep-alive request, 10 headers: uvicorn's httptools protocol → the edge protocol "
            f"(ratio {cpu['edge'] / cpu['plain']:.2f})",
            f"{cpu['plain']:.0f} → {cpu['edge']:.0f} µs",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.http_limits")
    commands = parser.add_subparsers(dest="command")
    flood_command = commands.add_parser("flood", help="hold slow-header connections until stdin closes")
    flood_command.add_argument("--port", type=int, required=True)
    flood_command.add_argument("--count", type=int, required=True)
    serve_command = commands.add_parser("serve", help="serve a bare app for the CPU comparison")
    serve_command.add_argument("--protocol", choices=["plain", "edge"], required=True)
    args = parser.parse_args()
    if args.command == "flood":
        raise_descriptor_limit()
        seen = uvloop.run(flood(args.port, args.count))
        sys.stdout.write(json.dumps(seen) + "\n")
    elif args.command == "serve":
        serve(args.protocol)
    else:
        run_alone(run)


if __name__ == "__main__":
    main()
