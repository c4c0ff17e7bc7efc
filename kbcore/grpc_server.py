"""gRPC server bootstrap shared by every service: health, reflection, graceful SIGTERM.

``build_server`` binds the address it is given and returns the port that
``add_insecure_port`` actually bound, so tests pass port 0 and never race for a port.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from kbcore.metrics.grpc_interceptor import metrics_interceptors

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # document uploads travel as one message
GRACE_SECONDS = 10.0

Registrar = Callable[[grpc.aio.Server], None]


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
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.server.stop(grace)


async def build_server(
    address: str,
    register: Registrar,
    service_names: Sequence[str],
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
) -> RunningServer:
    server = grpc.aio.server(
        interceptors=[*metrics_interceptors(), *interceptors],  # metrics outermost: they see every ending
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ],
    )
    register(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((*service_names, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise RuntimeError(f"could not bind gRPC address {address}")
    await server.start()
    running = RunningServer(server, port, health_servicer, tuple(service_names))
    await running.set_serving(True)
    return running


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
