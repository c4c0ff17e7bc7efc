"""The gateway's HTTP metrics: an ASGI middleware that counts and times every request by
method, route template and status, and counts the event streams being sent.

Pure ASGI (no ``BaseHTTPMiddleware``, which would buffer and copy a streamed answer). The route
template is read from the scope after routing (``scope["route"]``, set by Starlette's router on
the same scope dict), so ``/api/application/chat_message/{chat_id}`` is one label value however
many chats there are. Per response message the wrapper only passes the message on; the work
happens once at the start and once at the end of a response.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kbcore.metrics.catalog import HTTP_DURATION, HTTP_REQUESTS, SSE_STREAMS

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # no route: a 404, or a request refused before routing
EVENT_STREAM = b"text/event-stream"


def route_of(scope: Scope) -> str:
    route: Any = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else UNMATCHED


def _is_event_stream(message: Message) -> bool:
    for name, value in message.get("headers", ()):
        if name.lower() == b"content-type":
            return bool(value.startswith(EVENT_STREAM))
    return False


class HttpMetrics:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # a handler that fails before answering: the server sends a 500
        streaming = False

        async def observed_send(message: Message) -> None:
            nonlocal status, streaming
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if _is_event_stream(message):
                    streaming = True
                    SSE_STREAMS.inc()
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            if streaming:
                SSE_STREAMS.dec()
            method = str(scope["method"]).upper()
            method = method if method in METHODS else "other"
            route = route_of(scope)
            HTTP_REQUESTS.labels(method, route, str(status)).inc()
            HTTP_DURATION.labels(method, route).observe(time.perf_counter() - started)
