"""The common entry point of a gRPC service: settings from the environment, logging,
dependencies, the server, and a graceful stop on SIGTERM."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from kbcore.grpc_server import RunningServer, serve_until_signalled
from kbcore.settings import Settings


def announce_port(name: str, port: int) -> None:
    """Write the bound port to ``$KB_RUN_DIR/<name>.port`` when asked, so a launcher can start
    services on port 0 and learn where they listen without racing for ports."""
    run_dir = os.environ.get("KB_RUN_DIR")
    if run_dir:
        target = Path(run_dir) / f"{name}.port"
        partial = target.with_suffix(".tmp")
        partial.write_text(str(port))
        partial.replace(target)


class Closable(Protocol):
    async def close(self) -> None: ...


def run_service(
    name: str,
    open_deps: Callable[[Settings], Any],
    create_server: Callable[[Settings, Any], Awaitable[RunningServer]],
) -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    async def main() -> None:
        deps = open_deps(settings)
        if inspect.isawaitable(deps):
            deps = await deps
        running = await create_server(settings, deps)
        logging.getLogger(name).info("%s service listening on %s:%d", name, settings.grpc_host, running.port)
        announce_port(name, running.port)
        await serve_until_signalled(running, deps.close)

    asyncio.run(main())
