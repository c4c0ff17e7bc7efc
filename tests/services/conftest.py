"""gRPC stubs of the in-process stack's services, one channel per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kb.chat.v1 import chat_service_pb2_grpc as chat_grpc
from kb.context.v1 import context_service_pb2_grpc as context_grpc
from kb.retrieval.v1 import retrieval_service_pb2_grpc as retrieval_grpc
from kbcore.grpc_client import open_channel
from tests.harness import Stack


@pytest.fixture
async def retrieval(stack: Stack) -> AsyncIterator[retrieval_grpc.RetrievalServiceStub]:
    channel = open_channel(stack.retrieval_target)
    yield retrieval_grpc.RetrievalServiceStub(channel)
    await channel.close()


@pytest.fixture
async def chat(stack: Stack) -> AsyncIterator[chat_grpc.ChatServiceStub]:
    channel = open_channel(stack.chat_target)
    yield chat_grpc.ChatServiceStub(channel)
    await channel.close()


@pytest.fixture
async def context(stack: Stack) -> AsyncIterator[context_grpc.ContextServiceStub]:
    channel = open_channel(stack.context_target)
    yield context_grpc.ContextServiceStub(channel)
    await channel.close()
