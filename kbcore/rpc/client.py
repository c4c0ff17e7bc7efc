"""gRPC client channels: round-robin over every address a target resolves to, retries only
for idempotent unary calls on UNAVAILABLE, keep-alive so dead peers are noticed, and a quick
reconnect: a restarted service is used again within about a second (gRPC's default backoff grows
to two minutes; a supervisor restarts a service in under one), and a unary call that finds the
channel reconnecting waits briefly for it instead of failing at once. Every call carries the
service credential (``kbcore.rpc.credential_check``): it is a required argument, so no caller can
open a channel that the services would refuse."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import grpc

from kbcore.rpc.credential_check import presenting_interceptors
from kbcore.rpc.running import MAX_MESSAGE_BYTES


def _service_config(retry_services: list[str]) -> str:
    config: dict[str, object] = {"loadBalancingConfig": [{"round_robin": {}}]}
    if retry_services:
        config["methodConfig"] = [
            {
                "name": [{"service": name} for name in retry_services],
                "retryPolicy": {
                    "maxAttempts": 3,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    return json.dumps(config)


# Reconnect attempts while a peer is down: 0.2 s, then at most every second.
RECONNECT_BACKOFF_MS = (200, 1000)
# How long a unary call waits for a reconnecting channel before it is sent anyway (and fails
# with UNAVAILABLE if the peer is still away). Streams never wait: an answer in progress must
# end with an error at once, not hang.
READY_WAIT_SECONDS = 3.0


class _WaitForReconnect(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Holds a unary call for up to READY_WAIT_SECONDS while its channel is reconnecting."""

    def __init__(self) -> None:
        self.channel: grpc.aio.Channel | None = None

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        channel = self.channel
        if channel is not None and channel.get_state(try_to_connect=True) != grpc.ChannelConnectivity.READY:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(channel.channel_ready(), READY_WAIT_SECONDS)
        return await continuation(client_call_details, request)


def open_channel(target: str, credential: str, *, retry_services: list[str] | None = None) -> grpc.aio.Channel:
    """A channel to ``target`` (``host:port`` or ``dns:///name:port`` for every replica) whose
    every call carries ``credential`` (``kbcore.rpc.service_credential.service_credential(settings)``).

    Streams are never retried: ``retry_services`` should list only services whose every
    unary method is safe to repeat; callers pass explicit deadlines on every call.
    """
    if not credential:
        raise ValueError("a channel to the services needs the service credential")
    waiting = _WaitForReconnect()
    channel = grpc.aio.insecure_channel(
        target,
        interceptors=[waiting, *presenting_interceptors(credential)],
        options=[
            ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[0]),
            ("grpc.min_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[0]),
            ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[1]),
            ("grpc.service_config", _service_config(retry_services or [])),
            ("grpc.enable_retries", 1),
            ("grpc.keepalive_time_ms", 30000),
            ("grpc.keepalive_timeout_ms", 10000),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
    waiting.channel = channel
    return channel
