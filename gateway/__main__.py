"""``python -m gateway``: serve the HTTP API on KB_HTTP_HOST:KB_HTTP_PORT."""

from __future__ import annotations

import logging
import signal

import uvicorn

from gateway.app import create_app
from gateway.listen import bind_http_socket
from kbcore.service_main import announce_port
from kbcore.settings import Settings


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sock = bind_http_socket(settings.http_host, settings.http_port)
    port = sock.getsockname()[1]
    logging.getLogger("gateway").info("gateway listening on http://%s:%d", settings.http_host, port)
    announce_port("gateway", port)
    config = uvicorn.Config(
        create_app(settings), log_level=settings.log_level.lower(), timeout_graceful_shutdown=10, access_log=False
    )
    # uvicorn re-raises the stop signal after its graceful shutdown; a no-op handler lets that
    # end the process with exit code 0, like the gRPC services, instead of "killed by SIGTERM".
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
