"""How the HTTP protocol's own refusals (431, 408, 503) are told: to the client, as a complete
response written straight to the socket, since no ASGI app runs for them; to the operator, as
one log line per kind of refusal a minute, since a flood of them must not become a flood of
log lines.

The body is the one the ASGI edge gives (``refusal_body``: MaxKB's envelope, or OpenAI's error
object on the OpenAI-compatible paths), and ``Connection: close`` says the server reads
nothing more on this connection."""

from __future__ import annotations

import http
import json
import logging
import time

from gateway.edge.host_rules import NOSNIFF, refusal_body
from kbcore.words.said import Said

LOG_EVERY_SECONDS = 60.0
RETRY_AFTER_SECONDS = 5  # a 503 for a full server or address: worth retrying soon


def refusal_response(status: int, message: Said, path: str, extra_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole response: status line, headers (``extra_headers`` first: uvicorn's ``server``
    and ``date``), and the JSON body; ``path`` chooses the body's shape ("" if unknown)."""
    body = json.dumps(refusal_body(path, status, message, None), ensure_ascii=False).encode()
    headers = [
        *extra_headers,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        NOSNIFF,
    ]
    if status == 503:
        headers.append((b"retry-after", str(RETRY_AFTER_SECONDS).encode()))
    lines = [b"HTTP/1.1 %d %s" % (status, http.HTTPStatus(status).phrase.encode())]
    lines += [name + b": " + value for name, value in headers]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class RefusalLog:
    """At most one WARNING per kind of refusal every ``every`` seconds, with how many there
    were since the last line of its kind."""

    def __init__(self, logger: logging.Logger, every: float = LOG_EVERY_SECONDS) -> None:
        self.logger = logger
        self.every = every
        self._last: dict[str, float] = {}
        self._unlogged: dict[str, int] = {}

    def note(self, kind: str) -> None:
        count = self._unlogged.get(kind, 0) + 1
        now = time.monotonic()
        last = self._last.get(kind)
        if last is not None and now - last < self.every:
            self._unlogged[kind] = count
            return
        self._last[kind] = now
        self._unlogged[kind] = 0
        self.logger.warning("refused %d connection(s) since the last such line: %s", count, kind)
