"""The gateway's socket disables Nagle for every connection it accepts, so SSE frames leave
at once instead of waiting for the client's delayed ACK."""

from __future__ import annotations

import socket

import pytest

from gateway.edge.listen import bind_http_socket


def test_accepted_connections_have_nodelay() -> None:
    server = bind_http_socket("127.0.0.1", 0)
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    try:
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert server.family == socket.AF_INET and server.getsockname()[0] == "127.0.0.1"
        assert server.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) != 0, "a restart rebinds its port at once"
    finally:
        for sock in (accepted, client, server):
            sock.close()


def test_an_ipv6_host_gets_an_ipv6_socket() -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError as exc:
        pytest.skip(f"no IPv6 loopback on this machine: {exc}")
    server = bind_http_socket("::1", 0)
    try:
        assert server.family == socket.AF_INET6 and server.getsockname()[0] == "::1"
        assert server.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        server.close()
