"""Who is calling, as far as the token goes: the credential a request presents, whether it is
the break-glass operator token, and the call metadata that forwards it to the chat service (which
resolves it and checks ownership). What the caller may do is ``gateway.permission_check``'s.

The token comes in the ``Authorization`` header, as ``Bearer <token>`` or bare (MaxKB's own
pages send the token alone). A request that carries the header is always judged by what it
holds. One without it names nobody, except in development: with ``KB_DEV_LOOPBACK_OPERATOR`` on,
a loopback caller that sends no ``Authorization`` header at all is the operator, and the gateway
presents the operator token (``kbcore.rpc.caller_token``) on its behalf (docs/access.md, People
and roles: never behind a proxy on the same host, whose clients all arrive from loopback).
"""

from __future__ import annotations

import hmac
import ipaddress

from fastapi import Request

from gateway.errors import ApiError
from kbcore.rpc.caller_token import bearer
from kbcore.words.said import said

Metadata = tuple[tuple[str, str], ...]
EMPTY_TOKEN = said("authorization_header_holds_no_token_send")
NO_TOKEN = said("missing_token_send_authorization_bearer_token")
# A person's session (``kbs_``) or personal token (``kbp_``): what they may do depends on their
# role and grants, which only the chat service knows (docs/access.md).
USER_TOKEN_PREFIXES = ("kbs_", "kbp_")
# Every kind of token the chat service issues besides the operator's: a person's, an application
# key (``application-``) and a share-link visitor's (``visitor-``) (docs/access.md). Any other
# token names nobody, and is refused without asking the chat service.
ISSUED_PREFIXES = (*USER_TOKEN_PREFIXES, "application-", "visitor-")
UNKNOWN_TOKEN = said("token_not_one_deployment_issues_sign")


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


def is_user_token(token: str) -> bool:
    return token.startswith(USER_TOKEN_PREFIXES)


def is_issued_kind(token: str) -> bool:
    """Shaped like a token the chat service issues (whether it did is the chat service's to say)."""
    return token.startswith(ISSUED_PREFIXES)


def _is_loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in {"localhost", "testclient"}


def _operator_token(request: Request) -> str:
    return str(request.app.state.operator_token)


def is_dev_operator(request: Request) -> bool:
    """``KB_DEV_LOOPBACK_OPERATOR`` on and a loopback caller: the operator when it presents no
    credentials of its own (the caller checks that it presents none)."""
    return bool(request.app.state.settings.dev_loopback_operator) and _is_loopback(request)


def is_operator_token(request: Request, token: str) -> bool:
    """The break-glass operator token (``KB_ADMIN_TOKEN`` or ``data/operator.token``), compared in
    constant time."""
    return hmac.compare_digest(token.encode(), _operator_token(request).encode())


def caller_metadata(request: Request) -> Metadata:
    """The credentials the chat service resolves; 401 here when there are none at all."""
    token = presented_token(request)
    if token is not None:
        return bearer(token)
    if is_dev_operator(request):
        return bearer(_operator_token(request))
    raise ApiError(401, NO_TOKEN)
