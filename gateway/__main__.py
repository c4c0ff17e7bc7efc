"""``python -m gateway``: serve the HTTP API on KB_HTTP_HOST:KB_HTTP_PORT."""

from __future__ import annotations

import logging
import signal

import uvicorn

from gateway.app import create_app
from gateway.listen import bind_http_socket
from kbcore.heap import settle_after_start
from kbcore.log_format import configure_logging
from kbcore.service_main import announce_port
from kbcore.settings import Settings
from kbcore.tracing import instrument_app, setup_tracing

# How long an idle client connection is kept open. uvicorn's 5 s equals httpx's own idle expiry,
# so a client reusing a connection just as the gateway closed it got a ReadError on its POST
# (seen at 64 chats): the server must wait longer than clients do. nginx's default.
KEEP_ALIVE_SECONDS = 75


def main() -> None:
    settings = Settings.from_env()
    configure_logging("gateway", settings.log_level, settings.log_format)
    setup_tracing("gateway", settings.otlp_endpoint)  # before the app's channels are opened
    sock = bind_http_socket(settings.http_host, settings.http_port)
    port = sock.getsockname()[1]
    logging.getLogger("gateway").info("gateway listening on http://%s:%d", settings.http_host, port)
    announce_port("gateway", port)
    app = create_app(settings)
    instrument_app(app)
    # log_config=None: uvicorn's loggers write through the root handler, in KB_LOG_FORMAT.
    # uvloop, named rather than left to "auto", so a missing wheel fails loudly instead of
    # quietly costing more CPU per SSE write (the gRPC services run on it too, issue 18).
    config = uvicorn.Config(
        app,
        log_level=settings.log_level.lower(),
        timeout_graceful_shutdown=10,
        access_log=False,
        log_config=None,
        loop="uvloop",
        http="httptools",
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )
    # uvicorn re-raises the stop signal after its graceful shutdown; a no-op handler lets that
    # end the process with exit code 0, like the gRPC services, instead of "killed by SIGTERM".
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    settle_after_start()  # everything loaded to start, out of the collector's reach
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
