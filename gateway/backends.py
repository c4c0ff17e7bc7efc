"""The gRPC stubs the gateway talks to, and a helper that turns their errors into HTTP ones."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

import grpc

from gateway.errors import from_grpc
from kb.chat.v1 import chat_service_pb2_grpc
from kb.retrieval.v1 import retrieval_service_pb2_grpc
from kbcore.grpc_client import open_channel
from kbcore.settings import Settings

T = TypeVar("T")


@dataclass
class Backends:
    chat: chat_service_pb2_grpc.ChatServiceStub
    retrieval: retrieval_service_pb2_grpc.RetrievalServiceStub
    channels: tuple[grpc.aio.Channel, ...]
    rpc_timeout: float
    ask_timeout: float

    @classmethod
    def connect(cls, settings: Settings) -> Backends:
        chat_channel = open_channel(settings.target("chat"))
        retrieval_channel = open_channel(settings.target("retrieval"))
        return cls(
            chat=chat_service_pb2_grpc.ChatServiceStub(chat_channel),
            retrieval=retrieval_service_pb2_grpc.RetrievalServiceStub(retrieval_channel),
            channels=(chat_channel, retrieval_channel),
            rpc_timeout=settings.rpc_timeout,
            ask_timeout=settings.ask_timeout,
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


async def call(awaitable: Awaitable[T]) -> T:
    try:
        return await awaitable
    except grpc.aio.AioRpcError as exc:
        raise from_grpc(exc) from exc
