"""gRPC stubs of the in-process stack's services, one channel per test; and for the context
tests, a scripted OpenAI-protocol summarizer and real ContextService servers on port 0, each
with the token budget a test needs."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

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
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import Stack
from tests.services.context_support import ContextClient, Sessions, summarizer

StartContext = Callable[[int], Awaitable[ContextClient]]


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
