"""``/metrics`` of a gRPC service, served over HTTP on its own port.

``prometheus_client``'s own server: a thread per scrape, outside the service's event loop, so
a scrape is answered even while the loop is busy with a burst of questions (it only competes
for the interpreter lock while it formats the registry). Port 0 binds any free port (tests, the
ephemeral stack); the bound port is returned so the entry point can announce it.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server

from kbcore.metrics.registry import REGISTRY

log = logging.getLogger(__name__)


@dataclass
class MetricsServer:
    server: WSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        return int(self.server.server_port)

    def stop(self) -> None:
        """Stop answering and free the port (a scrape in flight finishes in its own thread)."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def serve_metrics(host: str, port: int) -> MetricsServer | None:
    """Serve the process's registry on ``host:port`` (every path answers it; Prometheus asks
    ``/metrics``); None when ``port`` is negative (metrics served nowhere)."""
    if port < 0:
        return None
    server, thread = start_http_server(port, addr=host, registry=REGISTRY)
    running = MetricsServer(server, thread)
    log.info("metrics on http://%s:%d/metrics", host, running.port)
    return running
