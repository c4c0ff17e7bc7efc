"""Who is calling: the operator (bearer KB_ADMIN_TOKEN), an application API key
(``application-…``) or a share-link visitor token, resolved by the chat service. With no
operator token configured, callers on loopback that send no token are the operator, so the
embedded demo needs no set-up but is not open to a network."""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import Request

from gateway.backends import call
from gateway.errors import ApiError
from kb.chat.v1 import chat_service_pb2 as chat_pb


def _bearer(request: Request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _is_loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in {"localhost", "testclient"}


async def resolve_caller(request: Request) -> chat_pb.Caller:
    admin_token: str = request.app.state.settings.admin_token
    token = _bearer(request)
    if token:
        if admin_token and hmac.compare_digest(token.encode(), admin_token.encode()):
            return chat_pb.Caller(kind=chat_pb.Caller.KIND_OPERATOR)
        backends = request.app.state.backends
        reply = await call(
            backends.chat.Authenticate(chat_pb.AuthenticateRequest(token=token), timeout=backends.rpc_timeout)
        )
        return reply.caller  # type: ignore[no-any-return]
    if not admin_token and _is_loopback(request):
        return chat_pb.Caller(kind=chat_pb.Caller.KIND_OPERATOR)
    raise ApiError(401, "missing token: send Authorization: Bearer <token>")


async def require_operator(request: Request) -> chat_pb.Caller:
    caller = await resolve_caller(request)
    if caller.kind != chat_pb.Caller.KIND_OPERATOR:
        raise ApiError(403, "only the operator may do this")
    return caller
