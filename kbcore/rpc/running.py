"""A running gRPC server: its health, its background work, its graceful stop on SIGTERM, and the
message size both ends of our channels allow.

Apart from ``kbcore.rpc.bootstrap`` (which builds the server with its entry layers, and through the
entry guard reaches the database's fault rules) so that a process that builds no server, the
gateway, imports neither.
"""

from __future__ import annotations

import asyncio
import io
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # document uploads travel as one message
GRACE_SECONDS = 10.0
# How long a stop waits for each background task to end once cancelled: one that is still
# waiting after that (on a lock another connection holds, say) is logged with where it waits
# and left behind, so that a stop always ends.
BACKGROUND_END_SECONDS = 10.0


@dataclass
class RunningServer:
    server: grpc.aio.Server
    port: int
    health: health.aio.HealthServicer
    service_names: tuple[str, ...]
    # The service's own periodic work (the chat service's sweep): it ends with the server.
    background: list[asyncio.Task[None]] = field(default_factory=list)

    async def set_serving(self, serving: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ("", *self.service_names):
            await self.health.set(name, status)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Say NOT_SERVING first so balancers move away, then let running calls finish."""
        await self.set_serving(False)
        for task in self.background:
            task.cancel()
        await _ended(self.background)
        await self.server.stop(grace)


async def _ended(tasks: list[asyncio.Task[None]]) -> None:
    """Wait for the cancelled ``tasks`` to end, for at most ``BACKGROUND_END_SECONDS`` in all; log
    a task's failure, and where one that did not end waits."""
    if not tasks:
        return
    done, pending = await asyncio.wait(tasks, timeout=BACKGROUND_END_SECONDS)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %r failed", task.get_name(), exc_info=task.exception())
    for task in pending:
        where = io.StringIO()
        task.print_stack(file=where)
        log.error(
            "background task %r did not end %.0f s after its cancel; left behind at:\n%s",
            task.get_name(),
            BACKGROUND_END_SECONDS,
            where.getvalue(),
        )


async def serve_until_signalled(running: RunningServer, on_stop: Callable[[], object] | None = None) -> None:
    """Run until SIGTERM/SIGINT, then stop gracefully; ``on_stop`` releases the service's resources."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("signal received: draining for up to %.0f s", GRACE_SECONDS)
    await running.stop()
    if on_stop is not None:
        result = on_stop()
        if asyncio.iscoroutine(result):
            await result
