"""The gRPC stubs the gateway talks to (``Backends``, one per app) and one request's way to call
them (``Backend``, one per request): the stubs, the deadline, the caller's credentials and the
mapping of gRPC errors to HTTP ones, bound once so that a route names only the method and the
message.

The chat service is shown the caller's token and resolves it itself. The retrieval service is
shown who the caller is instead: the principal the permission check resolved
(``gateway.permission_check``), as ``kb-caller-bin`` (``kbcore.permissions.wire``), so that it
checks and filters by the same table (docs/access.md, People and roles)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Annotated, Any, Protocol, TypeVar

import grpc
from fastapi import Depends, Request

from gateway.caller import Metadata, caller_metadata
from gateway.errors import ApiError, from_grpc
from kbcore.permissions.roles import Principal
from kbcore.permissions.wire import address_metadata, principal_metadata
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from kbcore.settings import Settings
from kbcore.words.said import said

RequestT = TypeVar("RequestT", contravariant=True)
ReplyT = TypeVar("ReplyT", covariant=True)
Reply = TypeVar("Reply")
Message = TypeVar("Message")
SentT = TypeVar("SentT", covariant=True)  # what a stream both ways sends (as its stub's protocol sees it)
GotT = TypeVar("GotT", covariant=True)
CallMetadata = tuple[tuple[str, str | bytes], ...]  # credentials (text) or a principal (``-bin``, bytes)
NO_PRINCIPAL = said("gateway_called_retrieval_service_before_resolving")


class UnaryMethod(Protocol[RequestT, ReplyT]):
    """A unary method of an asyncio stub (``chat.applications.GetApplication``)."""

    def __call__(
        self, request: RequestT, *, timeout: float | None = None, metadata: CallMetadata | None = None
    ) -> grpc.aio.UnaryUnaryCall[RequestT, ReplyT]: ...


class StreamMethod(Protocol[RequestT, ReplyT]):
    """A server-streaming method of an asyncio stub (``chat.answers.Ask``)."""

    def __call__(
        self, request: RequestT, *, timeout: float | None = None, metadata: CallMetadata | None = None
    ) -> grpc.aio.UnaryStreamCall[RequestT, ReplyT]: ...


class DuplexMethod(Protocol[SentT, GotT]):
    """A method of an asyncio stub streaming both ways (``retrieval.documents.UploadDocuments``)."""

    def __call__(
        self,
        request_iterator: AsyncIterator[Any],
        *,
        timeout: float | None = None,
        metadata: CallMetadata | None = None,
    ) -> grpc.aio.StreamStreamCall[SentT, GotT]: ...


def methods_of(*stubs: object) -> frozenset[int]:
    """The identities of the stubs' method objects: how a call is known to go to their service."""
    return frozenset(id(method) for stub in stubs for method in vars(stub).values())


@dataclass
class Backends:
    chat: ChatStubs
    retrieval: RetrievalStubs
    retrieval_methods: frozenset[int]  # ``methods_of`` the retrieval stubs
    channels: tuple[grpc.aio.Channel, ...]
    rpc_timeout: float
    ask_timeout: float

    @classmethod
    def connect(cls, settings: Settings) -> Backends:
        credential = service_credential(settings)
        chat_channel = open_channel(settings.target("chat"), credential)
        retrieval_channel = open_channel(settings.target("retrieval"), credential)
        retrieval = RetrievalStubs.of(retrieval_channel)
        return cls(
            chat=ChatStubs.of(chat_channel),
            retrieval=retrieval,
            retrieval_methods=methods_of(
                retrieval.search, retrieval.datasets, retrieval.documents, retrieval.paragraphs
            ),
            channels=(chat_channel, retrieval_channel),
            rpc_timeout=settings.rpc_timeout,
            ask_timeout=settings.ask_timeout,
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


class Backend:
    """One request's calls: ``await backend.unary(backend.chat.answers.Stop, request)``. A call to
    the chat service carries the caller's credentials (resolved at the first call and kept for
    the calls after it; 401 when there are none), a call to the retrieval service the principal
    the permission check resolved; every call has the unary deadline unless it names another,
    and a gRPC error comes out as an ``ApiError``. A sign-in calls as nobody
    (``AnonymousBackend``)."""

    __slots__ = ("_metadata", "_retrieval_methods", "ask_timeout", "chat", "request", "retrieval", "timeout")

    def __init__(self, backends: Backends, request: Request, *, anonymous: bool = False) -> None:
        self.chat = backends.chat
        self.retrieval = backends.retrieval
        self._retrieval_methods = backends.retrieval_methods
        self.timeout = backends.rpc_timeout
        self.ask_timeout = backends.ask_timeout
        self.request = request
        self._metadata: Metadata | None = () if anonymous else None

    @property
    def metadata(self) -> Metadata:
        """The caller's credentials (401 when there are none); empty for an anonymous call."""
        if self._metadata is None:
            self._metadata = caller_metadata(self.request)
        return self._metadata

    def metadata_for(self, method: object) -> CallMetadata | None:
        """What a call of ``method`` carries: the principal to the retrieval service, the
        credentials to the chat service (None: nothing), and to both the client's address for
        the audit trail."""
        address = address_metadata(self.request.client.host if self.request.client else "")
        if id(method) not in self._retrieval_methods:
            return (*self.metadata, *address) or None
        principal: Principal | None = getattr(self.request.state, "principal", None)
        if principal is None:
            raise ApiError(500, NO_PRINCIPAL)
        return (*principal_metadata(principal), *address)

    async def unary(
        self, method: UnaryMethod[Message, Reply], message: Message, *, timeout: float | None = None
    ) -> Reply:
        try:
            metadata = self.metadata_for(method)
            reply: Reply = await method(message, timeout=timeout or self.timeout, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            raise from_grpc(exc) from exc
        return reply

    def stream(
        self, method: StreamMethod[Message, Reply], message: Message, *, timeout: float | None = None
    ) -> grpc.aio.UnaryStreamCall[Message, Reply]:
        """A server stream under the answer's deadline; the caller reads it (``gateway.relay``)."""
        return method(message, timeout=timeout or self.ask_timeout, metadata=self.metadata_for(method))

    def duplex(
        self, method: DuplexMethod[Message, Reply], requests: AsyncIterator[Message], *, timeout: float
    ) -> grpc.aio.StreamStreamCall[Message, Reply]:
        """A stream both ways (an upload sent in pieces) under ``timeout``: ``requests`` are sent
        as they come, the answers read from the call (``gateway.uploads``), which the caller
        cancels when it gives up."""
        return method(requests, timeout=timeout, metadata=self.metadata_for(method))

    async def last_of(self, method: StreamMethod[Message, Any], message: Message, field: str, what: str) -> Any:
        """The last ``field`` event of a server stream (progress events before it are for chats
        and progress bars); a stream that ends without one is the backend's fault."""
        found = None
        try:
            async for event in self.stream(method, message):
                if event.HasField(field):
                    found = getattr(event, field)
        except grpc.aio.AioRpcError as exc:
            raise from_grpc(exc) from exc
        if found is None:
            raise ApiError(502, said("retrieval_service_ended_without", what=what, field=field))
        return found


async def backend(request: Request) -> Backend:
    """The route dependency. ``async`` because FastAPI runs a plain ``def`` dependency in a worker
    thread: a thread hop on every request for nothing."""
    return Backend(request.app.state.backends, request)


async def anonymous_backend(request: Request) -> Backend:
    """For the one call made before the caller has credentials: a share link's sign-in."""
    return Backend(request.app.state.backends, request, anonymous=True)


CallerBackend = Annotated[Backend, Depends(backend)]
AnonymousBackend = Annotated[Backend, Depends(anonymous_backend)]
