"""The common entry point of a gRPC service: settings from the environment, logging,
dependencies, the server, and a graceful stop on SIGTERM."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import uvloop

from kbcore.metrics.http_server import serve_metrics
from kbcore.metrics.registry import set_enabled as set_metrics_enabled
from kbcore.process.heap import settle_after_start
from kbcore.process.private_paths import private_folder
from kbcore.rpc.running import RunningServer, serve_until_signalled
from kbcore.settings import Settings
from kbcore.telemetry.log_format import configure_logging
from kbcore.telemetry.tracing import setup_tracing


def announce_port(settings: Settings, name: str, port: int) -> None:
    """Write the bound port to ``<KB_RUN_DIR>/<name>.port`` when asked, so a launcher can start
    services on port 0 and learn where they listen without racing for ports."""
    run_dir = settings.run_dir
    if run_dir:
        target = Path(run_dir) / f"{name}.port"
        partial = target.with_suffix(".tmp")
        partial.write_text(str(port))
        partial.replace(target)


def run_service(
    name: str,
    open_deps: Callable[[Settings], Any],
    create_server: Callable[[Settings, Any], Awaitable[RunningServer]],
) -> None:
    settings = Settings.from_env()
    private_folder(settings.data_dir)  # the database, the vector store and the secrets are in it
    configure_logging(name, settings.log_level, settings.log_format)
    setup_tracing(name, settings.otlp_endpoint)  # before the server and channels: it patches them
    set_metrics_enabled(settings.metrics)  # before the server is built: its interceptor follows it

    async def main() -> None:
        deps = open_deps(settings)
        if inspect.isawaitable(deps):
            deps = await deps
        running = await create_server(settings, deps)
        metrics = serve_metrics(settings.grpc_host, settings.metrics_port(name))
        if metrics is not None:  # announced first: a launcher that has read the service's port finds it
            announce_port(settings, f"{name}-metrics", metrics.port)
        logging.getLogger(name).info("%s service listening on %s:%d", name, settings.grpc_host, running.port)
        settle_after_start()  # everything loaded to start, out of the collector's reach
        announce_port(settings, name, running.port)
        try:
            await serve_until_signalled(running, deps.close)
        finally:
            if metrics is not None:
                metrics.stop()

    uvloop.run(main())  # a cheaper loop per callback (docs/decisions/uvloop.md)
