"""gRPC server bootstrap shared by every service: the entry layers, health, reflection.

Every server gets the same entry layers from here, so no service can forget one: the metrics
(outermost: they see every ending), the service credential (an unauthenticated caller learns
nothing, not even that its text had a NUL), the entry guard, then the service's own.
``build_server`` binds the address it is given and returns the port that
``add_insecure_port`` actually bound, so tests pass port 0 and never race for a port. The
running server it returns, and its graceful stop, are ``kbcore.rpc.running``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import grpc
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from kbcore.rpc.credential_check import RequireServiceCredential
from kbcore.rpc.guard import EntryGuard
from kbcore.rpc.metrics_interceptor import metrics_interceptors
from kbcore.rpc.running import MAX_MESSAGE_BYTES, RunningServer

__all__ = ["Registrar", "RunningServer", "build_server"]

Registrar = Callable[[grpc.aio.Server], None]


async def build_server(
    address: str,
    register: Registrar,
    service_names: Sequence[str],
    credential: str,
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
) -> RunningServer:
    """A started server that refuses every call without ``credential`` (``service_credential``)
    except health checks; ``interceptors`` are the service's own, run after the entry guard."""
    entry = [*metrics_interceptors(), RequireServiceCredential(credential), EntryGuard()]
    server = grpc.aio.server(
        interceptors=[*entry, *interceptors],
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
