"""Fixtures for the context tests: a scripted OpenAI-protocol summarizer and real
ContextService servers on port 0, each with the token budget a test needs."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import grpc
import pytest

from kbcore.grpc_client import open_channel
from kbcore.grpc_server import RunningServer
from kbcore.models.base import ModelClient
from kbcore.settings import Settings
from services.context.server import ContextDeps, create_server
from tests.context.support import ContextClient, Sessions, summarizer
from tests.fakes.openai_server import FakeOpenAI

StartContext = Callable[[int], Awaitable[ContextClient]]


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeOpenAI]:
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
        channel = open_channel(f"{settings.grpc_host}:{server.port}")
        running.append((server, channel))
        return ContextClient(channel, budget)

    yield start
    for server, channel in running:
        await channel.close()
        await server.stop(grace=1)
