"""gRPC stubs of the in-process stack's services, one channel per test; and for the context
tests, a scripted OpenAI-protocol summarizer and real ContextService servers on port 0, each
with the token budget a test needs."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import grpc
import pytest

from grpc_stubs.chat.v1 import chat_service_pb2_grpc as chat_grpc
from grpc_stubs.context.v1 import context_service_pb2_grpc as context_grpc
from kbcore.models.base import ModelClient
from kbcore.rpc.bootstrap import RunningServer
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from kbcore.settings import Settings
from services.context.server import ContextDeps, create_server
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.server import RetrievalDeps
from services.retrieval.server import create_server as create_retrieval
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store
from tests.counting_embedder import GatedEmbedder
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import Stack
from tests.services.context_support import ContextClient, Sessions, summarizer

StartContext = Callable[[int], Awaitable[ContextClient]]


@dataclasses.dataclass
class LoopbackNode:
    """A retrieval server of the test's own (see ``loopback_node``) and its counting embedder."""

    stub: RetrievalStubs
    embedder: GatedEmbedder


@pytest.fixture
async def loopback_node(
    settings: Settings, sessions: Sessions, tmp_path: Path, embedder: Embedder, offline_model: ModelClient
) -> AsyncIterator[LoopbackNode]:
    """A retrieval server on a vector store of its own (so only it works on its jobs), allowed to
    fetch from 127.0.0.1, whose worker and web-sync schedule look for work ten times a second."""
    store: VectorStore = await open_vector_store(
        qdrant_url=None, qdrant_api_key=None, edge_path=tmp_path / "edge", dimension=384
    )
    quick = dataclasses.replace(
        settings, ingest_poll_seconds=0.1, web_sync_poll_seconds=0.1, fetch_allow_hosts="127.0.0.1"
    )
    counting = GatedEmbedder(embedder)
    server = await create_retrieval(quick, RetrievalDeps(sessions, store, counting, offline_model), port=0)
    channel = open_channel(f"127.0.0.1:{server.port}", service_credential(settings))
    yield LoopbackNode(RetrievalStubs.of(channel), counting)
    await channel.close()
    await server.stop(grace=0)
    await store.close()


@pytest.fixture
async def retrieval(stack: Stack) -> AsyncIterator[RetrievalStubs]:
    channel = open_channel(stack.retrieval_target, stack.credential)
    yield RetrievalStubs.of(channel)
    await channel.close()


@pytest.fixture
async def chat(stack: Stack) -> AsyncIterator[ChatStubs]:
    channel = open_channel(stack.chat_target, stack.credential)
    yield ChatStubs.of(channel)
    await channel.close()


@pytest.fixture
def users(chat: ChatStubs) -> chat_grpc.UserServiceStub:
    """The chat service's accounts (sign-in, tokens, user management)."""
    return chat.users


@pytest.fixture
async def context(stack: Stack) -> AsyncIterator[context_grpc.ContextServiceStub]:
    channel = open_channel(stack.context_target, stack.credential)
    yield context_grpc.ContextServiceStub(channel)
    await channel.close()


@pytest.fixture
def operator(stack: Stack) -> tuple[tuple[str, str], ...]:
    """Call metadata with the operator's token (the local one: the test settings configure none)."""
    return bearer(operator_token(stack.settings))


# --- the context tests ---------------------------------------------------------------------


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeOpenAI]:
    """The summarizer behind ``model`` (tests/conftest.py). A module that scripts the model its own
    way defines its own ``fake``, which pytest uses there instead (test_retrieval_loop.py)."""
    with FakeOpenAI(default=summarizer) as server:
        yield server


@pytest.fixture
async def start_context(settings: Settings, sessions: Sessions, model: ModelClient) -> AsyncIterator[StartContext]:
    """``await start_context(budget)``: a ContextService with that budget, summarizing through ``model``."""
    running: list[tuple[RunningServer, grpc.aio.Channel]] = []

    async def start(budget: int) -> ContextClient:
        server = await create_server(
            dataclasses.replace(settings, context_recent_tokens=budget), ContextDeps(sessions, model), port=0
        )
        channel = open_channel(f"{settings.grpc_host}:{server.port}", service_credential(settings))
        running.append((server, channel))
        return ContextClient(channel, budget)

    yield start
    for server, channel in running:
        await channel.close()
        await server.stop(grace=1)
