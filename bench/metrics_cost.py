"""What metrics cost: CPU per question of our four processes at 64 concurrent chats
with ``KB_METRICS`` off and on (the default), the same stack and questions as the tracing
section (``tracing_cost.cpu_ms_per_question``: the pipeline's target configuration).

The two settings run in turns (off, on, off, on, …), ``RUNS`` pairs; the overhead is the median
of the pairs' ratios, so a burst of load from elsewhere skews one pair, not the figure. The CPU
figures shown are each setting's lowest (noise only ever adds CPU). Nothing scrapes during
the run; a scrape every 15 s costs its formatting once per process, not per question.

First, the metrics' own work per operation in this process (the gRPC interceptor per unary
call and per 50-message stream, the gateway middleware per streamed request), off and on in
turns: small figures that a busy machine blurs less than the whole stack's.

``python -m bench.metrics_cost`` runs this section alone and prints its rows.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from bench import pipeline
from bench.table import Row, median, run_alone
from bench.tracing_cost import SERVICES, cpu_ms_per_question
from kbcore.metrics.asgi import HttpMetrics
from kbcore.metrics.registry import set_enabled
from kbcore.rpc.bootstrap import build_server
from kbcore.rpc.client import open_channel

SECTION = "metrics"
TARGET_OVERHEAD = 0.05  # on may cost at most 5% more CPU per question than off
RUNS = 3
TRIES = 5
STREAM_MESSAGES = 50  # an answer's chunks in the pipeline bench's model


async def _echo(request: bytes, context: Any) -> bytes:
    return request


async def _fifty(request: bytes, context: Any) -> AsyncIterator[bytes]:
    for _ in range(STREAM_MESSAGES):
        yield request


def _register(server: grpc.aio.Server) -> None:
    same = lambda b: b  # noqa: E731  (bytes in, bytes out)
    handlers = {
        "Echo": grpc.unary_unary_rpc_method_handler(_echo, same, same),
        "Fifty": grpc.unary_stream_rpc_method_handler(_fifty, same, same),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Metered", handlers),))


async def _grpc_us(enabled: bool, calls: int = 2000) -> tuple[float, float]:
    """CPU µs of this process (client and server) per unary call and per 50-message stream."""
    set_enabled(enabled)
    credential = secrets.token_hex(16)
    server = await build_server("127.0.0.1:0", _register, ["bench.Metered"], credential)
    set_enabled(True)
    async with open_channel(f"127.0.0.1:{server.port}", credential) as channel:
        echo, fifty = channel.unary_unary("/bench.Metered/Echo"), channel.unary_stream("/bench.Metered/Fifty")
        for _ in range(100):
            await echo(b"x")
        started = time.process_time()
        for _ in range(calls):
            await echo(b"x")
        unary = (time.process_time() - started) / calls * 1e6
        started = time.process_time()
        for _ in range(calls // 4):
            async for _ in fifty(b"x"):
                pass
        stream = (time.process_time() - started) / (calls // 4) * 1e6
    await server.stop(0)
    return unary, stream


async def _asgi_us(metered: bool, requests: int = 20000) -> float:
    """CPU µs per request of an app answering a 50-event stream, bare or under ``HttpMetrics``."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for _ in range(STREAM_MESSAGES):
            await send({"type": "http.response.body", "body": b"data:x\n\n", "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request"}

    async def send(message: Any) -> None:
        return None

    served = HttpMetrics(app) if metered else app
    started = time.process_time()
    for _ in range(requests):
        await served({"type": "http", "method": "POST", "path": "/x"}, receive, send)
    return (time.process_time() - started) / requests * 1e6


async def micro_rows() -> tuple[list[Row], dict[str, Any]]:
    """The metrics' own work per operation, in one process: robust to a busy machine, where the
    whole-stack figure below is not. Lowest of ``TRIES`` tries each."""
    grpc_off: list[tuple[float, float]] = []
    grpc_on: list[tuple[float, float]] = []
    await _grpc_us(True)  # warm-up: the first server of a process costs more
    for _ in range(TRIES):  # in turns, so a drift in the machine's load touches both alike
        grpc_off.append(await _grpc_us(False))
        grpc_on.append(await _grpc_us(True))
    asgi_off = min([await _asgi_us(False) for _ in range(TRIES)])
    asgi_on = min([await _asgi_us(True) for _ in range(TRIES)])
    unary = min(u for u, _ in grpc_on) - min(u for u, _ in grpc_off)
    stream = min(s for _, s in grpc_on) - min(s for _, s in grpc_off)
    rows = [
        Row(SECTION, "interceptor's CPU per unary RPC (client and server in one process)", f"{unary:+.1f} µs"),
        Row(SECTION, f"interceptor's CPU per {STREAM_MESSAGES}-message server stream", f"{stream:+.1f} µs"),
        Row(
            SECTION,
            f"gateway middleware's CPU per request streaming {STREAM_MESSAGES} events",
            f"{asgi_on - asgi_off:+.1f} µs",
        ),
    ]
    return rows, {"grpc_off_us": grpc_off, "grpc_on_us": grpc_on, "asgi_off_us": asgi_off, "asgi_on_us": asgi_on}


async def run() -> tuple[list[Row], dict[str, Any]]:
    micro, micro_raw = await micro_rows()
    calibration = [pipeline.calibration_ms()]
    runs: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    for _ in range(RUNS):
        runs["off"].append(await cpu_ms_per_question({"KB_METRICS": "0"}))
        runs["on"].append(await cpu_ms_per_question({"KB_METRICS": "1"}))
    calibration.append(pipeline.calibration_ms())
    off, on = (min(runs[key], key=lambda ms: sum(ms.values())) for key in ("off", "on"))
    total_off, total_on = sum(off.values()), sum(on.values())
    pairs = [sum(b.values()) / sum(a.values()) - 1 for a, b in zip(runs["off"], runs["on"], strict=True)]
    overhead = median(pairs)
    by_process = ", ".join(f"{name} {off[name]:.1f} → {on[name]:.1f}" for name in SERVICES)
    rows = [
        *micro,
        Row(
            SECTION,
            f"CPU per question at 64 chats, four processes, metrics off → on ({by_process}; best of {RUNS}; "
            f"calibration {calibration[0]:.0f}/{calibration[-1]:.0f} ms)",
            f"{total_off:.1f} → {total_on:.1f} ms",
        ),
        Row(
            SECTION,
            f"metrics' CPU overhead per question (median of {RUNS} off/on pairs: "
            + ", ".join(f"{p:+.0%}" for p in pairs)
            + ")",
            f"{overhead:+.1%}",
            f"≤ +{TARGET_OVERHEAD:.0%}",
            overhead <= TARGET_OVERHEAD,
        ),
    ]
    raw = {
        **micro_raw,
        "runs": runs,
        "pairs": pairs,
        "off_ms": off,
        "on_ms": on,
        "overhead": overhead,
        "calibration_ms": calibration,
    }
    return rows, raw


if __name__ == "__main__":
    run_alone(run)
