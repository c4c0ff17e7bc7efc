"""A server's stop ends even when a background task will not: the task is logged with where it
waits, and a task that failed is logged with its failure."""

from __future__ import annotations

import asyncio
import logging

import grpc
import pytest
from grpc_health.v1 import health

from kbcore.rpc import running
from kbcore.rpc.running import RunningServer


async def _server() -> RunningServer:
    server = grpc.aio.server()
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return RunningServer(server, port, health.aio.HealthServicer(), ())


async def _deaf_to_cancel(release: asyncio.Event) -> None:
    """Waits for ``release`` and swallows every cancel until then: a task stuck in its cleanup."""
    while not release.is_set():
        try:
            await release.wait()
        except asyncio.CancelledError:
            continue


async def _failing() -> None:
    raise RuntimeError("the sweep broke")


async def test_a_stop_leaves_a_task_that_ignores_its_cancel_behind_and_says_where_it_waits(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(running, "BACKGROUND_END_SECONDS", 0.3)
    release = asyncio.Event()
    server = await _server()
    stuck = asyncio.create_task(_deaf_to_cancel(release), name="stuck cleanup")
    ended = asyncio.create_task(asyncio.sleep(3600), name="well-behaved")
    failed = asyncio.create_task(_failing(), name="broken sweep")
    server.background += [stuck, ended, failed]
    with caplog.at_level(logging.ERROR, logger="kbcore.rpc.running"):
        await asyncio.wait_for(server.stop(grace=0), timeout=5)
    assert ended.cancelled() and not stuck.done()
    messages = [record.getMessage() for record in caplog.records]
    assert any("'stuck cleanup' did not end" in m and "_deaf_to_cancel" in m for m in messages), messages
    assert any("'broken sweep' failed" in m for m in messages), messages
    assert not any("well-behaved" in m for m in messages), messages
    release.set()
    await stuck
