"""Who is calling, as far as the gateway needs to know: it forwards the caller's token to the
chat service as call metadata (the chat service resolves it and checks ownership), and it
recognises the operator itself for the routes that go to the retrieval service.

The token comes in the ``Authorization`` header, as ``Bearer <token>`` or bare (MaxKB's own
pages send the token alone). With no operator token configured, callers on loopback that send
no ``Authorization`` header at all are the operator, so the embedded demo needs no set-up but is
not open to a network; the gateway then presents the local operator token
(``kbcore.rpc.caller_token``) on their behalf. A request that carries the header is always
judged by what it holds: a visitor's page behind a proxy on the same host stays a visitor.
"""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import Request

from gateway.errors import ApiError
from kbcore.rpc.caller_token import bearer

Metadata = tuple[tuple[str, str], ...]
EMPTY_TOKEN = "the Authorization header holds no token: send Authorization: Bearer <token>"
NO_TOKEN = "missing token: send Authorization: Bearer <token>"


def presented_token(request: Request) -> str | None:
    """The token the request presents, with or without ``Bearer``; None without the header.
    A header that holds no token is refused (401) rather than read as no header."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, rest = header.strip().partition(" ")
    token = rest.strip() if scheme.lower() == "bearer" else header.strip()
    if not token:
        raise ApiError(401, EMPTY_TOKEN)
    return token


def _is_loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in {"localhost", "testclient"}


def _operator_token(request: Request) -> str:
    return str(request.app.state.operator_token)


def _is_local_operator(request: Request) -> bool:
    """No operator token configured, a loopback caller, and no credentials of its own."""
    return not request.app.state.settings.admin_token and _is_loopback(request)


def is_operator(request: Request) -> bool:
    """The caller presents the operator's token (or is the local operator, who presents none)."""
    token = presented_token(request)
    if token is None:
        return _is_local_operator(request)
    return hmac.compare_digest(token.encode(), _operator_token(request).encode())


def caller_metadata(request: Request) -> Metadata:
    """The credentials the chat service resolves; 401 here when there are none at all."""
    token = presented_token(request)
    if token is not None:
        return bearer(token)
    if _is_local_operator(request):
        return bearer(_operator_token(request))
    raise ApiError(401, NO_TOKEN)
