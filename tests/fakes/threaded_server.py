"""An ASGI app served by uvicorn on a thread, on a free port of 127.0.0.1: how every fake
provider runs, so real clients reach it over real HTTP from synchronous and async tests alike."""

from __future__ import annotations

import threading
from typing import Any

import uvicorn

from tests.eventually import eventually_sync


class ThreadedServer:
    def __init__(self, name: str) -> None:
        self._name = name
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self, app: Any) -> int:
        """Serve ``app``; the port it listens on."""
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="off",
            http="h11",
            ws="none",
            loop="asyncio",
            timeout_graceful_shutdown=1,
        )
        server = self._server = uvicorn.Server(config)
        thread = self._thread = threading.Thread(target=server.run, name=self._name, daemon=True)
        thread.start()

        def started() -> bool:
            if not thread.is_alive():
                raise RuntimeError(f"the {self._name} server stopped while starting")
            return server.started

        eventually_sync(started, interval=0.01, what=f"the {self._name} server starting")
        return int(server.servers[0].sockets[0].getsockname()[1])

    def stop(self) -> None:
        """Stop serving (forcefully if a stream does not end within five seconds); idempotent."""
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=5)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout=5)
        self._server = self._thread = None


async def request_body(receive: Any) -> bytes:
    """The whole body of an HTTP request, read from a bare ASGI app's ``receive`` (the fakes that
    skip a framework to keep their own CPU out of what they measure)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)
