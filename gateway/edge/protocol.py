"""The gateway's HTTP/1.1 protocol: uvicorn's httptools protocol with the limits it lacks,
decided as bytes arrive, before any request reaches the app.

uvicorn with httptools bounds nothing before the app runs: no size or count of headers
(httptools grows a header value by concatenation, so one 128 MiB header took the gateway to
338 MB), no time limit for a request's headers (a connection that sends half a request line
stays open forever), and its only connection bound (``limit_concurrency``) answers 503 after
reading the request's headers, per server, not per client. This subclass adds, through the
parser callbacks only:

- **header size**: bytes of the request line and headers are counted before they are parsed;
  past the limit the client gets 431 and the connection is closed, the rest never read. (A
  request pipelined behind another in one read is counted from the next read, so it can pass
  the limit by at most one read, at most a few hundred KiB.)
- **header count**: more headers than allowed gets 431.
- **header time**: from connect, or from the first byte of each next request on a kept-alive
  connection, the client has so long to send the complete headers, else 408. Idle time between
  requests is uvicorn's keep-alive timeout.
- **connections**: in all and per client address, counted in a ``ConnectionBook``; a
  connection over either is answered 503 as soon as it is accepted and closed.

A refusal is written only when no response is being sent on the connection (a status cannot go
into the middle of another response): a client that pipelines a refused request behind one
still answering just loses the connection."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from gateway.edge.connection_book import ConnectionBook, Full
from gateway.edge.refusals import RefusalLog, refusal_response
from kbcore.addresses.client_address import address_key
from kbcore.words.said import Said, said

log = logging.getLogger("gateway")


@dataclass(frozen=True)
class EdgeLimits:
    header_bytes: int  # request line plus headers
    headers: int
    header_timeout: float  # seconds


class EdgeHttpProtocol(HttpToolsProtocol):
    """One per connection, as uvicorn makes them; ``bound_protocol`` gives it its limits.
    Its own state is named ``edge_…`` so it cannot meet uvicorn's."""

    edge_limits: ClassVar[EdgeLimits]
    edge_book: ClassVar[ConnectionBook]
    edge_refusals: ClassVar[RefusalLog]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.edge_address = ""
        self.edge_admitted = False  # counted in the book, so released exactly once at close
        self.edge_refused = False  # a refusal was decided: nothing more is parsed or answered
        self.edge_awaiting_headers = True  # the next bytes belong to a request's line and headers
        self.edge_request_begun = False
        self.edge_header_bytes = 0
        self.edge_header_count = 0
        self.edge_max_headers = self.edge_limits.headers
        self.edge_headers_completed = 0
        self.edge_header_timer: asyncio.TimerHandle | None = None

    # Connections: admitted against the book at accept, released however they end.

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.edge_address = address_key(self.client[0]) if self.client else ""
        full = self.edge_book.admit(self.edge_address)
        if full is Full.ADDRESS:
            per_address = self.edge_book.per_address
            message = said("too_many_open_connections_your_address", per_address=per_address)
            self.edge_refuse(503, message, "over the connections per address")
        elif full is Full.ALL:
            message = said("server_holds_many_connections_can_right")
            self.edge_refuse(503, message, "over the connections in all")
        else:
            self.edge_admitted = True
            self.edge_arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.edge_admitted:
            self.edge_admitted = False
            self.edge_book.release(self.edge_address)
        self.edge_cancel_header_timer()
        super().connection_lost(exc)

    # Bytes: counted against the header limit before the parser sees them.

    def data_received(self, data: bytes) -> None:
        if self.edge_refused:
            return
        if not self.edge_awaiting_headers:
            HttpToolsProtocol.data_received(self, data)
            return
        completed = self.edge_headers_completed
        room = self.edge_limits.header_bytes - self.edge_header_bytes
        if len(data) <= room:
            self.edge_header_bytes += len(data)
            HttpToolsProtocol.data_received(self, data)
            # Bytes that leave a request's headers open start its clock (on a new connection it
            # runs from connect); a request that came whole costs no timer.
            if self.edge_awaiting_headers and (self.edge_request_begun or self.edge_headers_completed == completed):
                self.edge_arm_header_timer()
            return
        self.edge_header_bytes += room
        if room > 0:
            super().data_received(data[:room])
        if self.edge_refused or self.transport.is_closing():
            return
        if self.edge_headers_completed == completed:  # the limit reached, the headers still open
            kib = self.edge_limits.header_bytes // 1024
            message = said("request_line_headers_are_larger_server", kib=kib)
            self.edge_refuse(431, message, "headers over the size limit")
            return
        self.data_received(data[room:])  # the body, or the next request, counted afresh

    # Parser callbacks: each one does nothing once the connection is refused, so the rest of a
    # read being parsed can neither start the app nor make uvicorn answer a second time. They
    # run for every request (``on_header`` for every header): the parent's method is named
    # rather than reached through super(), which costs a lookup each time.

    def on_message_begin(self) -> None:
        if self.edge_refused:
            return
        self.edge_request_begun = True
        self.edge_header_count = 0
        HttpToolsProtocol.on_message_begin(self)

    def on_header(self, name: bytes, value: bytes) -> None:
        self.edge_header_count += 1
        if self.edge_header_count > self.edge_max_headers or self.edge_refused:
            if not self.edge_refused:
                message = said("request_has_more_headers_server_accepts", self_edge_max_headers=self.edge_max_headers)
                self.edge_refuse(431, message, "over the header count")
            return
        HttpToolsProtocol.on_header(self, name, value)

    def on_headers_complete(self) -> None:
        if self.edge_refused:
            return
        self.edge_awaiting_headers = False
        self.edge_headers_completed += 1
        if self.edge_header_timer is not None:
            self.edge_cancel_header_timer()
        HttpToolsProtocol.on_headers_complete(self)

    def on_body(self, body: bytes) -> None:
        if not self.edge_refused:
            HttpToolsProtocol.on_body(self, body)

    def on_message_complete(self) -> None:
        if self.edge_refused:
            return
        HttpToolsProtocol.on_message_complete(self)
        self.edge_awaiting_headers = True
        self.edge_request_begun = False
        self.edge_header_bytes = 0

    def send_400_response(self, msg: str) -> None:
        if not self.edge_refused:
            super().send_400_response(msg)

    # The header timer and the refusal itself.

    def edge_arm_header_timer(self) -> None:
        if self.edge_header_timer is None and not self.edge_refused:
            self.edge_header_timer = self.loop.call_later(self.edge_limits.header_timeout, self.edge_header_timeout)

    def edge_cancel_header_timer(self) -> None:
        if self.edge_header_timer is not None:
            self.edge_header_timer.cancel()
            self.edge_header_timer = None

    def edge_header_timeout(self) -> None:
        self.edge_header_timer = None
        if self.edge_refused or not self.edge_awaiting_headers or self.transport.is_closing():
            return
        if self.edge_response_in_flight():  # bytes pipelined behind a response still going: more time
            self.edge_arm_header_timer()
            return
        seconds = f"{self.edge_limits.header_timeout:g}"
        self.edge_refuse(408, said("request_headers_did_not_arrive_within", seconds=seconds), "header timeout")

    def edge_response_in_flight(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def edge_path(self) -> str:
        """The path asked, once the request line has begun ("" before: the MaxKB shape)."""
        if not self.edge_request_begun:
            return ""
        try:
            return bytes(httptools.parse_url(self.url).path or b"").decode("latin-1")
        except httptools.HttpParserInvalidURLError:
            return ""

    def edge_refuse(self, status: int, message: Said, kind: str) -> None:
        """Answer ``status`` and close, reading nothing more; once per connection."""
        self.edge_refused = True
        self.edge_cancel_header_timer()
        self.edge_refusals.note(kind)
        if not self.transport.is_closing() and not self.edge_response_in_flight():
            default_headers = self.server_state.default_headers
            self.transport.write(refusal_response(status, message, self.edge_path(), default_headers))
        self.transport.close()


def bound_protocol(limits: EdgeLimits, book: ConnectionBook) -> type[EdgeHttpProtocol]:
    """The protocol class for one server: its limits and its book of connections."""

    class BoundEdgeHttpProtocol(EdgeHttpProtocol):
        edge_limits = limits
        edge_book = book
        edge_refusals = RefusalLog(log)

    return BoundEdgeHttpProtocol
