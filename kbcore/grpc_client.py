"""gRPC client channels: round-robin over every address a target resolves to, retries only
for idempotent unary calls on UNAVAILABLE, keep-alive so dead peers are noticed."""

from __future__ import annotations

import json

import grpc

from kbcore.grpc_server import MAX_MESSAGE_BYTES


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


def open_channel(target: str, *, retry_services: list[str] | None = None) -> grpc.aio.Channel:
    """A channel to ``target`` (``host:port`` or ``dns:///name:port`` for every replica).

    Streams are never retried: ``retry_services`` should list only services whose every
    unary method is safe to repeat; callers pass explicit deadlines on every call.
    """
    return grpc.aio.insecure_channel(
        target,
        options=[
            ("grpc.service_config", _service_config(retry_services or [])),
            ("grpc.enable_retries", 1),
            ("grpc.keepalive_time_ms", 30000),
            ("grpc.keepalive_timeout_ms", 10000),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )
