"""The gateway's socket disables Nagle for every connection it accepts, so SSE frames leave
at once instead of waiting for the client's delayed ACK."""

from __future__ import annotations

import socket

from gateway.listen import bind_http_socket


def test_accepted_connections_have_nodelay() -> None:
    server = bind_http_socket("127.0.0.1", 0)
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    try:
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert server.getsockname()[1] != 0, "port 0 was resolved to a real port"
    finally:
        for sock in (accepted, client, server):
            sock.close()
