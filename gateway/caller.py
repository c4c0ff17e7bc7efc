"""Who is calling, as far as the gateway needs to know: it forwards the caller's bearer token to
the chat service as call metadata (the chat service resolves it and checks ownership), and it
recognises the operator itself for the routes that go to the retrieval service.

With no operator token configured, callers on loopback that send no token are the operator, so
the embedded demo needs no set-up but is not open to a network; the gateway then presents the
local operator token (``kbcore.rpc.caller_token``) on their behalf.
"""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import Request

from gateway.errors import ApiError
from kbcore.rpc.caller_token import bearer

Metadata = tuple[tuple[str, str], ...]


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


def _operator_token(request: Request) -> str:
    return str(request.app.state.operator_token)


def is_operator(request: Request) -> bool:
    """The caller presents the operator's token (or is the local operator, who presents none)."""
    token = _bearer(request) or _operator_token(request)
    return hmac.compare_digest(token.encode(), _operator_token(request).encode())


def caller_metadata(request: Request) -> Metadata:
    """The credentials the chat service resolves; 401 here when there are none at all."""
    token = _bearer(request)
    if token:
        return bearer(token)
    if not request.app.state.settings.admin_token and _is_loopback(request):
        return bearer(_operator_token(request))
    raise ApiError(401, "missing token: send Authorization: Bearer <token>")
