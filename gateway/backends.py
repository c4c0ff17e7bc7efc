"""The gRPC stubs the gateway talks to, and a helper that turns their errors into HTTP ones."""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
from fastapi import Request

from gateway.errors import ApiError, from_grpc
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from kbcore.settings import Settings

T = TypeVar("T")


@dataclass
class Backends:
    chat: ChatStubs
    retrieval: RetrievalStubs
    channels: tuple[grpc.aio.Channel, ...]
    rpc_timeout: float
    ask_timeout: float

    @classmethod
    def connect(cls, settings: Settings) -> Backends:
        credential = service_credential(settings)
        chat_channel = open_channel(settings.target("chat"), credential)
        retrieval_channel = open_channel(settings.target("retrieval"), credential)
        return cls(
            chat=ChatStubs.of(chat_channel),
            retrieval=RetrievalStubs.of(retrieval_channel),
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


async def backends(request: Request) -> Backends:
    """The route dependency that hands a route the app's stubs. ``async`` because FastAPI runs
    a plain ``def`` dependency in a worker thread: a thread hop on every request for nothing."""
    return request.app.state.backends  # type: ignore[no-any-return]


async def last_of(stream: AsyncIterable[Any], field: str, what: str) -> Any:
    """The last ``field`` event of a server stream (progress events before it are for chats
    and progress bars); a stream that ends without one is the backend's fault."""
    found = None

    async def consume() -> None:
        nonlocal found
        async for event in stream:
            if event.HasField(field):
                found = getattr(event, field)

    await call(consume())
    if found is None:
        raise ApiError(502, f"the retrieval service ended {what} without a {field}")
    return found


async def retrieve(b: Backends, request: retrieval_pb.RetrieveRequest) -> common_pb2.RetrievalResult:
    """Run the multi-round loop and keep only its result."""
    result: common_pb2.RetrievalResult = await last_of(
        b.retrieval.search.Retrieve(request, timeout=b.ask_timeout), "result", "the loop"
    )
    return result
