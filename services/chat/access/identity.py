"""Who is calling, resolved once per call from the call's metadata by a server interceptor.

The operator token, an application API key or a visitor token arrive as
``authorization: Bearer …``; the interceptor resolves them before the servicer method runs and
refuses the call (UNAUTHENTICATED) when they are missing or unknown. Methods read the result
with ``current_caller()``. Only visitor sign-in, which exchanges a share link for a visitor
token, runs without credentials.
"""

from __future__ import annotations

import contextlib
import contextvars
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import grpc

from kbcore.errors import Unauthenticated
from kbcore.rpc.caller_token import token_in
from kbcore.rpc.error_mapping import abort_for
from kbcore.rpc.handlers import rewrapped
from services.chat.access.credentials import Credentials


class CallerKind(Enum):
    OPERATOR = "operator"  # may do everything
    APPLICATION = "application"  # an application API key: that application's chats
    VISITOR = "visitor"  # a share-link visitor: only its own chats


@dataclass(frozen=True)
class Caller:
    kind: CallerKind
    application_id: str = ""
    visitor_id: str = ""
    key_id: str = ""  # an application caller's API key


_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")


def current_caller() -> Caller:
    """The caller of the call being served (set by ``CallerInterceptor``)."""
    try:
        return _CALLER.get()
    except LookupError as exc:
        raise Unauthenticated("the caller is not identified") from exc


class CallerResolver:
    """Turns a bearer token into a caller: the operator token, else a stored key or visitor."""

    def __init__(self, operator_token: str, credentials: Credentials) -> None:
        self._operator_token = operator_token.encode()
        self._credentials = credentials

    async def resolve(self, token: str) -> Caller:
        if not token:
            raise Unauthenticated("missing credentials: send 'authorization: Bearer <token>' metadata")
        if hmac.compare_digest(token.encode(), self._operator_token):
            return Caller(CallerKind.OPERATOR)
        identity = await self._credentials.identify(token)
        if identity is None:
            raise Unauthenticated("unknown or revoked token")
        kind = CallerKind.VISITOR if identity.kind == "visitor" else CallerKind.APPLICATION
        return Caller(kind, identity.application_id, identity.visitor_id, identity.key_id)


class CallerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Resolves the caller of every call to the chat service's proto services except the public
    methods, once, before the method."""

    def __init__(self, services: tuple[str, ...], resolver: CallerResolver, public_methods: frozenset[str]) -> None:
        self._prefixes = tuple(f"/{service}/" for service in services)
        self._resolver = resolver
        self._public = frozenset(prefix + m for prefix in self._prefixes for m in public_methods)

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or not method.startswith(self._prefixes) or method in self._public:
            return handler
        token = token_in(details.invocation_metadata)
        return rewrapped(handler, lambda b: self._unary(b, token), lambda b: self._stream(b, token))

    async def _identify(self, token: str, context: grpc.aio.ServicerContext[Any, Any]) -> contextvars.Token[Caller]:
        try:
            return _CALLER.set(await self._resolver.resolve(token))
        except Unauthenticated as exc:
            await abort_for(context, "identifying the caller", exc)
            raise AssertionError("unreachable: abort raises") from exc

    def _unary(self, behaviour: Any, token: str) -> Any:
        async def identified(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            reset = await self._identify(token, context)
            try:
                return await behaviour(request, context)
            finally:
                _CALLER.reset(reset)

        return identified

    def _stream(self, behaviour: Any, token: str) -> Any:
        async def identified(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            reset = await self._identify(token, context)
            try:
                async with contextlib.aclosing(behaviour(request, context)) as items:
                    async for item in items:
                        yield item
            finally:
                # A stream the client left is closed by whoever finalizes the generator, in
                # another context than the one that set the caller: that context is gone, and
                # so is what there was to reset.
                with contextlib.suppress(ValueError):
                    _CALLER.reset(reset)

        return identified
