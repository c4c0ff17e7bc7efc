"""The gateway's listening socket, bound before uvicorn starts so port 0 works and the real
port is known."""

from __future__ import annotations

import socket


def bind_http_socket(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by every accepted connection. Without it, the first SSE frame after the
    # response headers waited for the client's delayed ACK, which delayed the first progress
    # event by tens of milliseconds.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    return sock
