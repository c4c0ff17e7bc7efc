"""The whole stack in the test's event loop: real gRPC servers on port 0, the real gateway on
a port-0 socket, real SQL and the real vector store; only the remote model is replaced (by a
real local HTTP server speaking the OpenAI protocol, where a test asks for it)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.app import create_app
from gateway.backends import Backends
from gateway.edge.listen import bind_http_socket
from gateway.edge.server_config import http_config
from kbcore.models.base import ModelClient
from kbcore.rpc.bootstrap import RunningServer
from kbcore.rpc.caller_token import operator_token
from kbcore.rpc.service_credential import service_credential
from kbcore.settings import Settings
from services.chat.server import ChatDeps
from services.chat.server import create_server as create_chat_server
from services.context.server import ContextDeps
from services.context.server import create_server as create_context_server
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.server import RetrievalDeps
from services.retrieval.server import create_server as create_retrieval_server
from services.retrieval.store.base import VectorStore
from tests.eventually import eventually
from tests.shared_tls import TLS

# What a client sends to read the service's own words in English, as a developer's client that
# asks for it does: the suite's assertions read the refusals' English; their Chinese, the
# default, has tests of its own.
READS_ENGLISH = {"Accept-Language": "en"}
# What MaxKB's own chat page sends in a Chinese browser: the words its captured wire holds.
MAXKB_PAGE_LANGUAGE = {"Accept-Language": "zh-CN,zh;q=0.9"}


def http_client(url: str, token: str | None, **kwargs: Any) -> httpx.AsyncClient:
    """A client of the gateway at ``url`` presenting ``token`` unless the ``headers`` given
    carry an ``Authorization`` of their own (None: no credentials at all). It reads English
    (``READS_ENGLISH``) unless the ``headers`` name another language."""
    headers = httpx.Headers(kwargs.pop("headers", None))
    for name, value in READS_ENGLISH.items():
        headers.setdefault(name, value)
    if token is not None and "authorization" not in headers:
        headers["Authorization"] = f"Bearer {token}"
    kwargs.setdefault("timeout", 120)
    return httpx.AsyncClient(verify=TLS, base_url=url, headers=headers, **kwargs)


class SteppedClock:
    """The real monotonic clock plus however far a test has moved it on: what the stack's
    cached answers expire by, so a test steps past an expiry instead of sleeping through it."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.ahead

    def advance(self, seconds: float) -> None:
        self.ahead += seconds


@dataclass
class Stack:
    settings: Settings
    servers: list[RunningServer]
    gateway: uvicorn.Server
    gateway_task: asyncio.Task[None]
    chat_deps: ChatDeps
    url: str
    # Retrieval's and context's dependencies: their registered models' clients close at stop.
    service_deps: tuple[RetrievalDeps, ContextDeps] | None = None
    clock: SteppedClock = field(default_factory=SteppedClock)  # what retrieval's cached answers expire by

    @property
    def credential(self) -> str:
        """The service credential every gRPC call of the stack's processes carries."""
        return service_credential(self.settings)

    @property
    def retrieval_target(self) -> str:
        return self.settings.target("retrieval")

    @property
    def chat_target(self) -> str:
        return self.settings.target("chat")

    @property
    def context_target(self) -> str:
        return self.settings.target("context")

    @property
    def operator_token(self) -> str:
        """The break-glass operator credential (``KB_ADMIN_TOKEN`` or ``<data_dir>/operator.token``)."""
        return operator_token(self.settings)

    def http(self, *, anonymous: bool = False, **kwargs: Any) -> httpx.AsyncClient:
        """A client of the gateway that presents the operator token, as automation would: a
        loopback caller with no credentials is nobody (docs/access.md). ``anonymous=True`` sends
        none; ``headers`` with an ``Authorization`` of their own present that instead, and so
        does a request that passes its own header."""
        return http_client(self.url, None if anonymous else self.operator_token, **kwargs)

    async def stop(self) -> None:
        self.gateway.should_exit = True
        await self.gateway_task
        for server in reversed(self.servers):
            await server.stop(grace=1)
        await self.chat_deps.context_channel.close()
        await self.chat_deps.retrieval_channel.close()
        for deps in (self.chat_deps, *(self.service_deps or ())):
            if deps.endpoints is not None:  # the shared model, store and sessions belong to the caller
                await deps.endpoints.aclose()
        if self.service_deps is not None and self.service_deps[0].spaces is not None:
            await self.service_deps[0].spaces.close()  # the embedding models' own stores


@contextlib.asynccontextmanager
async def another_gateway(settings: Settings) -> AsyncIterator[str]:
    """One more gateway on a stack's services, under ``settings``, on the uvicorn config
    ``python -m gateway`` runs (``http_config``: where KB_TRUSTED_PROXIES and the edge limits
    take effect), on a port-0 socket; yields its URL."""
    sock = bind_http_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = http_config(create_app(settings), settings, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await eventually(lambda: server.started or task.done(), timeout=60, what="the gateway starting")
        if task.done():
            task.result()
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def start_stack(
    settings: Settings,
    *,
    sessions: async_sessionmaker[AsyncSession],
    store: VectorStore,
    embedder: Embedder,
    model: ModelClient,
) -> Stack:
    """Start retrieval, context, chat and the gateway; the caller owns sessions, store and model."""
    from kbcore.rpc.client import open_channel

    host = settings.grpc_host
    clock = SteppedClock()
    retrieval_deps = RetrievalDeps(sessions, store, embedder, model, clock=clock)
    context_deps = ContextDeps(sessions, model)
    retrieval = await create_retrieval_server(settings, retrieval_deps, port=0)
    context = await create_context_server(settings, context_deps, port=0)
    settings = dataclasses.replace(
        settings,
        retrieval_target=f"{host}:{retrieval.port}",
        context_target=f"{host}:{context.port}",
    )
    chat_deps = ChatDeps(
        sessions=sessions,
        model=model,
        context_channel=open_channel(settings.context_target, service_credential(settings)),
        retrieval_channel=open_channel(settings.retrieval_target, service_credential(settings)),
    )
    chat = await create_chat_server(settings, chat_deps, port=0)
    settings = dataclasses.replace(settings, chat_target=f"{host}:{chat.port}")

    sock = bind_http_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    app = create_app(settings, Backends.connect(settings))
    server = uvicorn.Server(http_config(app, settings, log_level="warning", access_log=False, lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))

    def started() -> bool:
        if task.done():
            task.result()  # the gateway's own failure, at once
        return server.started

    await eventually(started, timeout=60, interval=0.01, what="the gateway starting")
    servers = [retrieval, context, chat]
    url = f"http://127.0.0.1:{port}"
    return Stack(settings, servers, server, task, chat_deps, url, (retrieval_deps, context_deps), clock)
