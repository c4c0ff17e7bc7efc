"""The one place the gateway's uvicorn server is configured, for ``python -m gateway`` and the
test harness alike, so the tests run the limits that run in production.

What is fixed here: uvloop and the edge protocol (httptools with the header, time and connection
limits of ``gateway.edge.protocol``), no WebSocket protocol (the gateway serves none, and an
upgrade would hand the connection to a protocol that keeps no count of it), the keep-alive
timeout, a connection cap and backlog the process's file descriptors can hold, and whose
``X-Forwarded-For``/``-Proto`` are believed (``KB_TRUSTED_PROXIES``, ``gateway.edge.proxies``:
nobody's unless it names proxies). Logging, lifespan and shutdown choices are the caller's."""

from __future__ import annotations

import math
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from gateway.edge.connection_book import ConnectionBook
from gateway.edge.descriptors import backlog_for, connection_cap, descriptor_limit
from gateway.edge.protocol import EdgeLimits, bound_protocol
from gateway.edge.proxies import proxy_options
from kbcore.settings import Settings


def http_config(app: ASGIApp, settings: Settings, **options: Any) -> uvicorn.Config:
    """uvicorn's config for ``app`` under ``settings``' HTTP limits; ``options`` are the other
    ``uvicorn.Config`` arguments (log level, lifespan, graceful shutdown …).

    The connection cap is sized against the soft open-file limit in force now, so a process
    that raises it (``gateway.edge.descriptors.raise_descriptor_limit``) does so first. A
    ``KB_TRUSTED_PROXIES`` entry that is not an address or network raises ``SettingsError``."""
    proxies = proxy_options(settings.trusted_proxies)
    descriptors = descriptor_limit()
    limits = EdgeLimits(
        header_bytes=settings.http_max_header_kb * 1024,
        headers=settings.http_max_headers,
        header_timeout=settings.http_header_timeout,
    )
    book = ConnectionBook(
        connection_cap(settings.http_max_connections, descriptors), settings.http_max_connections_per_ip
    )
    # uvloop, named rather than left to "auto", so a missing wheel fails loudly instead of
    # quietly costing more CPU per SSE write (the gRPC services run on it too).
    # The keep-alive timeout must outlast clients' own idle expiry (httpx's is 5 s, uvicorn's
    # default too: a client reusing a connection just as the gateway closed it got a ReadError
    # on its POST); uvicorn takes whole seconds.
    return uvicorn.Config(
        app,
        loop="uvloop",
        http=bound_protocol(limits, book),
        ws="none",
        timeout_keep_alive=math.ceil(settings.http_keep_alive),
        backlog=backlog_for(descriptors),
        **proxies,
        **options,
    )
