"""Rebuilding a gRPC method handler around new behaviour, for server interceptors: the one
place that knows how a handler's unary and server-streaming halves are put back together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

Behaviour = Any  # grpc ships no types for handler behaviours


def rewrapped(
    handler: grpc.RpcMethodHandler,
    unary: Callable[[Behaviour], Behaviour],
    stream: Callable[[Behaviour], Behaviour],
) -> grpc.RpcMethodHandler:
    """``handler`` with its behaviour passed through ``unary`` or ``stream``. Other kinds (the
    reflection service's bidirectional stream) pass through unchanged: the project's own
    services serve only unary and server-streaming methods."""
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            unary(handler.unary_unary),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            stream(handler.unary_stream),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler
