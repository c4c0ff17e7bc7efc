"""``python -m gateway``: serve the HTTP API on KB_HTTP_HOST:KB_HTTP_PORT."""

from __future__ import annotations

import logging
import signal

import uvicorn

from gateway.app import create_app
from gateway.edge.descriptors import raise_descriptor_limit
from gateway.edge.listen import bind_http_socket
from gateway.edge.server_config import http_config
from kbcore.process.heap import settle_after_start
from kbcore.rpc.service_main import announce_port
from kbcore.settings import Settings, SettingsError
from kbcore.telemetry.log_format import configure_logging
from kbcore.telemetry.tracing import instrument_app, setup_tracing


def main() -> None:
    settings = Settings.from_env()
    configure_logging("gateway", settings.log_level, settings.log_format)
    # First: the server's connection cap is sized against the limit this leaves.
    raise_descriptor_limit()
    setup_tracing("gateway", settings.otlp_endpoint)  # before the app's channels are opened
    sock = bind_http_socket(settings.http_host, settings.http_port)
    port = sock.getsockname()[1]
    app = create_app(settings)
    instrument_app(app)
    # log_config=None: uvicorn's loggers write through the root handler, in KB_LOG_FORMAT.
    try:
        config = http_config(
            app,
            settings,
            log_level=settings.log_level.lower(),
            timeout_graceful_shutdown=10,
            access_log=False,
            log_config=None,
        )
    except SettingsError as exc:  # a setting that cannot work: its sentence, not a traceback
        raise SystemExit(str(exc)) from None
    # Listening before the port is announced: a launcher that reads it may connect at once, and
    # the backlog holds that connection until uvicorn accepts (a bound socket alone refuses it).
    sock.listen(config.backlog)
    logging.getLogger("gateway").info("gateway listening on http://%s:%d", settings.http_host, port)
    announce_port(settings, "gateway", port)
    # uvicorn re-raises the stop signal after its graceful shutdown; a no-op handler lets that
    # end the process with exit code 0, like the gRPC services, instead of "killed by SIGTERM".
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: None)
    settle_after_start()  # everything loaded to start, out of the collector's reach
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
