"""How large a request body may be, enforced at the edge while it is read: a declared
``Content-Length`` over the route's limit is refused before the route runs, and a chunked body
is cut off the moment it passes the limit, so an oversized body is never buffered, parsed or
looked at by anything that depends on who sent it. One mechanism for every route, the
OpenAI-compatible ones included (their 1 MiB is the JSON default).

Why: bodies were read and validated before authentication with no limit, so one anonymous
284 MB POST took the gateway from 74 MB to a 1.3 GB peak. (FastAPI's own ``max_body_size``
swaps any response to a declared-oversize request for a plain-text one, losing both the MaxKB
envelope and OpenAI's error shape, hence this small middleware.)

The upload route's limit is the operator's ``KB_UPLOAD_MAX_MB`` (plus the multipart framing),
read from the app's settings; the route itself then checks the file alone against the same
setting while reading it, so a file over the limit is refused (413) before it is forwarded."""

from __future__ import annotations

import re

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.edge.host_rules import refusal_body
from kbcore.settings import Settings
from kbcore.words.said import said

MiB = 1024 * 1024
MAX_JSON_BODY_BYTES = 1 * MiB  # every JSON route; a question is at most 4000 tokens
MULTIPART_FRAMING_BYTES = MiB  # an upload's boundaries, part headers and small fields
EVAL_BODY_BYTES = 8 * MiB  # up to 500 evaluation cases
MAX_FORM_DATA_BYTES = 16 * 1024  # an ask's form_data, forwarded to the chat service as JSON
UPLOAD_ROUTE = re.compile(r"^/api/dataset/(?:[^/]+/document|document/split)$")  # an upload, a split preview
# The other routes that take more than a JSON request; everything else gets MAX_JSON_BODY_BYTES.
ROUTE_LIMITS = ((re.compile(r"^/api/application/[^/]+/eval$"), EVAL_BODY_BYTES),)
LIMIT_SCOPE_KEY = "kb.body_limit"


def upload_max_bytes(settings: Settings) -> int:
    """The largest file (or archive) one upload may carry: ``KB_UPLOAD_MAX_MB``."""
    return settings.upload_max_mb * MiB


def limit_for(path: str, upload_bytes: int) -> int:
    if UPLOAD_ROUTE.match(path):
        return upload_bytes + MULTIPART_FRAMING_BYTES
    return next((limit for pattern, limit in ROUTE_LIMITS if pattern.match(path)), MAX_JSON_BODY_BYTES)


def _app_settings(scope: Scope) -> Settings:
    """The settings of the app this request is for (Starlette puts the app in the scope before
    any middleware runs); the defaults for an app built without them."""
    settings = getattr(getattr(scope.get("app"), "state", None), "settings", None)
    return settings if isinstance(settings, Settings) else Settings()


def _size(limit: int) -> str:
    return f"{limit // MiB} MiB" if limit % MiB == 0 else f"{limit // 1024} KiB"


def _too_large(scope: Scope, limit: int) -> tuple[int, dict[str, object]]:
    message = said("request_body_larger", size_limit=_size(limit))
    return 413, refusal_body(str(scope["path"]), 413, message, Headers(scope=scope).get("accept-language"))


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when a body outgrows its limit; an HTTPException, so FastAPI's
    body parsing passes it on and the app's handler answers with ``body_too_large``."""

    def __init__(self) -> None:
        super().__init__(status_code=413, detail="request body too large")


def body_too_large(request: Request) -> JSONResponse:
    """The 413 in the route's wire shape, naming the limit. The connection stays open: the
    server discards the rest of the body as it arrives (memory stays flat), and a client that
    writes its whole body before reading still gets the 413 rather than a connection reset."""
    status, body = _too_large(request.scope, int(request.scope.get(LIMIT_SCOPE_KEY, MAX_JSON_BODY_BYTES)))
    return JSONResponse(body, status_code=status)


class BodyLimit:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = scope[LIMIT_SCOPE_KEY] = limit_for(str(scope["path"]), upload_max_bytes(_app_settings(scope)))
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            status, body = _too_large(scope, limit)
            await JSONResponse(body, status_code=status)(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge()
            return message

        await self.app(scope, limited_receive, send)
