"""Metrics: the gRPC interceptor every service gets from ``build_server``, on a real
server on port 0. A call is counted once, with the status it ended with; a stream only when it
ends, however many messages it sent."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kbcore.metrics.registry import REGISTRY
from kbcore.rpc.bootstrap import RunningServer, build_server
from kbcore.rpc.client import open_channel
from tests.eventually import eventually

SERVICE = "kbtest.Metered"
release = asyncio.Event()


async def unary(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    if request == b"missing":
        await context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")
    if request == b"crash":
        raise RuntimeError("a bug")
    return b"ok"


async def stream(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
    for _ in range(3):
        yield b"chunk"
    await release.wait()  # the test looks at the counters while the stream is open
    if request == b"missing":
        await context.abort(grpc.StatusCode.NOT_FOUND, "gone midway")


def _register(server: grpc.aio.Server) -> None:
    same = lambda b: b  # noqa: E731  (bytes in, bytes out)
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, same, same),
        "Stream": grpc.unary_stream_rpc_method_handler(stream, same, same),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))


def handled(method: str, code: str) -> float:
    labels = {"grpc_service": SERVICE, "grpc_method": method, "grpc_code": code}
    return REGISTRY.get_sample_value("kb_grpc_server_handled_total", labels) or 0.0


def timed(method: str) -> float:
    labels = {"grpc_service": SERVICE, "grpc_method": method}
    return REGISTRY.get_sample_value("kb_grpc_server_handling_seconds_count", labels) or 0.0


@pytest.fixture
async def running() -> AsyncIterator[tuple[RunningServer, grpc.aio.Channel]]:
    credential = secrets.token_hex(16)
    server = await build_server("127.0.0.1:0", _register, [SERVICE], credential)
    channel = open_channel(f"127.0.0.1:{server.port}", credential)
    release.clear()
    yield server, channel
    release.set()
    await channel.close()
    await server.stop(grace=0.5)


async def test_unary_calls_are_counted_by_their_status(running: tuple[RunningServer, grpc.aio.Channel]) -> None:
    _, channel = running
    call = channel.unary_unary(f"/{SERVICE}/Unary")
    before = {code: handled("Unary", code) for code in ("OK", "NOT_FOUND", "INTERNAL")}
    timed_before = timed("Unary")
    assert await call(b"fine") == b"ok"
    # A crash ends INTERNAL: build_server's entry guard maps what escapes a method (with an error id).
    for request, code in ((b"missing", grpc.StatusCode.NOT_FOUND), (b"crash", grpc.StatusCode.INTERNAL)):
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await call(request)
        assert failed.value.code() == code
    # The server counts a call as it ends, which may be just after its caller has the answer.
    expected = {"OK": 1, "NOT_FOUND": 1, "INTERNAL": 1}
    await eventually(
        lambda: {code: handled("Unary", code) - before[code] for code in before},
        lambda counted: counted == expected,
        what="each call counted by its status",
    )
    await eventually(lambda: timed("Unary") - timed_before, lambda n: n == 3, what="three calls timed")


async def test_a_stream_is_counted_at_its_end_with_the_status_it_ended_with(
    running: tuple[RunningServer, grpc.aio.Channel],
) -> None:
    _, channel = running
    ok_before, missing_before = handled("Stream", "OK"), handled("Stream", "NOT_FOUND")
    call = channel.unary_stream(f"/{SERVICE}/Stream")(b"missing")
    received = [await call.read() for _ in range(3)]
    assert received == [b"chunk"] * 3
    # Open, with three messages sent: nothing counted yet, and certainly not OK.
    assert (handled("Stream", "OK"), handled("Stream", "NOT_FOUND")) == (ok_before, missing_before)
    release.set()
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await call.read()
    assert ended.value.code() == grpc.StatusCode.NOT_FOUND
    await asyncio.sleep(0.05)  # the server's side of the call finishes after the client has its status
    assert (handled("Stream", "OK"), handled("Stream", "NOT_FOUND")) == (ok_before, missing_before + 1)


async def test_a_stream_the_caller_cancels_is_counted_cancelled(
    running: tuple[RunningServer, grpc.aio.Channel],
) -> None:
    _, channel = running
    before = handled("Stream", "CANCELLED")
    call = channel.unary_stream(f"/{SERVICE}/Stream")(b"fine")
    assert await call.read() == b"chunk"
    call.cancel()
    await eventually(lambda: handled("Stream", "CANCELLED"), lambda n: n > before, what="the cancelled call counted")
    assert handled("Stream", "CANCELLED") == before + 1
    assert handled("Stream", "OK") == 0


async def test_health_watch_still_streams_through_the_interceptor(
    running: tuple[RunningServer, grpc.aio.Channel],
) -> None:
    """Health's Watch writes with ``context.write`` instead of yielding: it must pass unchanged."""
    _, channel = running
    watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=SERVICE))
    first = await watch.read()
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    watch.cancel()
