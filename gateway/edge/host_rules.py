"""The gateway's outermost ASGI layer: refuse a foreign ``Host``, a cross-origin state change
and an undeclared body type before routing, parsing or anything that depends on who calls
(``gateway.edge.rules`` says why), and mark every response ``X-Content-Type-Options: nosniff``
so no answer (a CSV export, an error) is ever sniffed into something a browser runs.

Refusals come in the wire shape of the route asked: MaxKB's envelope, or OpenAI's error object
on the OpenAI-compatible paths, so SDKs raise them as their own errors."""

from __future__ import annotations

import json
from typing import Any

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.edge.rules import EdgeRules, body_type_refusal
from gateway.errors import envelope, is_openai_path, reader_language, shown
from gateway.openai.wire import OpenAIError
from kbcore.words.said import Said

NOSNIFF = (b"x-content-type-options", b"nosniff")
# The HTTP request's own refusals, answered before any route or service: no domain error stands
# behind them, so they are not in the catalogue (``kbcore.refusals.error_catalogue``), whose 413 is a
# question over the token limit, not a body over the size limit. Their type is still the
# catalogue's for their status (``OpenAIError.body``).
OPENAI_ERROR_CODES = {413: "request_too_large", 415: "unsupported_media_type"}


def refusal_body(path: str, status: int, words: Said, accept_language: str | None) -> dict[str, Any]:
    """The refusal in the wire shape of ``path``, in the words its client reads (the protocol's
    own refusals come before any header is read: ``accept_language`` None)."""
    language = reader_language(accept_language)
    if is_openai_path(path):
        return OpenAIError(status, words, code=OPENAI_ERROR_CODES.get(status)).body(language)
    return envelope(None, shown(words, status, language), status)


def _has_body(headers: Headers) -> bool:
    length = headers.get("content-length", "").strip()
    return "transfer-encoding" in headers or (length not in ("", "0"))


class EdgeGuard:
    def __init__(self, app: ASGIApp, rules: EdgeRules) -> None:
        self.app = app
        self.rules = rules

    def _refusal(self, scope: Scope) -> tuple[int, Said] | None:
        headers = Headers(scope=scope)
        method = str(scope["method"]).upper()
        host = headers.get("host")
        if reason := self.rules.host_refusal(host):
            return 400, reason
        if reason := self.rules.origin_refusal(method, headers.get("origin"), host):
            return 403, reason
        if reason := body_type_refusal(method, _has_body(headers), headers.get("content-type")):
            return 415, reason
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_nosniff(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == NOSNIFF[0] for name, _ in headers):
                    headers.append(NOSNIFF)
                message = {**message, "headers": headers}
            await send(message)

        refused = self._refusal(scope)
        if refused is None:
            await self.app(scope, receive, send_nosniff)
            return
        status, reason = refused
        accept_language = Headers(scope=scope).get("accept-language")
        body = json.dumps(
            refusal_body(str(scope["path"]), status, reason, accept_language), ensure_ascii=False
        ).encode()
        # A body the client may still be sending is never read; the server discards it.
        await send_nosniff(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
