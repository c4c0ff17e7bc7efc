"""The service credential on the wire: the server interceptor that refuses a call without it, and
the client interceptors that put it on every call a channel of ours sends.

Both are installed by the one function that builds a server (``kbcore.rpc.bootstrap``) and the
one that opens a channel (``kbcore.rpc.client``), so no service or caller can forget them. The
standard health service stays open: container and supervisor health checks carry no secret,
and it tells nothing but SERVING.
"""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health

from kbcore.refusals.status_details import details_entry
from kbcore.rpc.handlers import CallMetadata, MethodInterceptor, refusing
from kbcore.rpc.service_credential import METADATA_KEY, presents
from kbcore.words.said import said

REFUSED = said("port_serves_only_knowledge_base_own")
OPEN_PREFIXES = (f"/{health.SERVICE_NAME}/",)


class RequireServiceCredential(MethodInterceptor):
    """Ends every call without the service credential with UNAUTHENTICATED before any other
    layer's behaviour runs (an unauthenticated caller learns nothing about its request). The
    refusal keeps the method's kind, so the metrics outside it count it under its method; an
    unknown method stays UNIMPLEMENTED, so no caller can make up metric labels."""

    def __init__(self, credential: str) -> None:
        self._credential = credential

    def intercepted(self, handler: grpc.RpcMethodHandler, method: str, metadata: CallMetadata) -> grpc.RpcMethodHandler:
        if method.startswith(OPEN_PREFIXES) or presents(metadata, self._credential):
            return handler
        return refusing(handler, _refuse)


async def _refuse(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    code = grpc.StatusCode.UNAUTHENTICATED
    await context.abort(code, str(REFUSED), trailing_metadata=(details_entry(code, REFUSED),))


class _Presenting:
    """Puts the service credential on a call's metadata, replacing any the caller set."""

    def __init__(self, credential: str) -> None:
        self._entry = (METADATA_KEY, credential)

    def _with_credential(self, details: Any) -> grpc.aio.ClientCallDetails:
        kept = (item for item in details.metadata or () if item[0] != METADATA_KEY)
        return grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            grpc.aio.Metadata(*kept, self._entry),
            details.credentials,
            details.wait_for_ready,
        )


class _UnaryUnary(_Presenting, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(self._with_credential(client_call_details), request)


class _UnaryStream(_Presenting, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(self._with_credential(client_call_details), request)


class _StreamUnary(_Presenting, grpc.aio.StreamUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_stream_unary(self, continuation: Any, client_call_details: Any, requests: Any) -> Any:
        return await continuation(self._with_credential(client_call_details), requests)


class _StreamStream(_Presenting, grpc.aio.StreamStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_stream_stream(self, continuation: Any, client_call_details: Any, requests: Any) -> Any:
        return await continuation(self._with_credential(client_call_details), requests)


def presenting_interceptors(credential: str) -> list[grpc.aio.ClientInterceptor]:
    """One interceptor per kind of call (a channel files each interceptor under the first kind
    it is), so every call carries ``credential``: the services serve unary and server-streaming
    methods; reflection streams both ways."""
    return [kind(credential) for kind in (_UnaryUnary, _UnaryStream, _StreamUnary, _StreamStream)]
