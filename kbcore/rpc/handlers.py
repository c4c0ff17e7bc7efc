"""Server interceptors' common ground: the opening every one of them shares
(``MethodInterceptor``), and rebuilding a gRPC method handler around new behaviour, the one place
that knows how a handler's unary, server-streaming and bidirectional halves are put back
together."""

from __future__ import annotations

import abc
import contextlib
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

import grpc

Behaviour = Any  # grpc ships no types for handler behaviours
CallMetadata = Iterable[tuple[str, str | bytes]] | None  # a call's invocation metadata
T = TypeVar("T")


class MethodInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """A server interceptor that works on the handler grpc found for a call's method. grpc looks
    the method up first; an unknown one has no handler and is left to grpc, which answers
    UNIMPLEMENTED: its name is the caller's to make up, so nothing is counted, checked or
    refused by it. ``intercepted`` sees only a known method's handler."""

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        return self.intercepted(handler, details.method, details.invocation_metadata)

    @abc.abstractmethod
    def intercepted(self, handler: grpc.RpcMethodHandler, method: str, metadata: CallMetadata) -> grpc.RpcMethodHandler:
        """What the call to ``method`` (``/package.Service/Method``, with the call's ``metadata``)
        runs: ``handler`` wrapped, or left as it is, or a refusal of its kind (``refusing``)."""


def refusing(handler: grpc.RpcMethodHandler, refuse: Behaviour) -> grpc.RpcMethodHandler:
    """A handler of ``handler``'s kind whose behaviour is ``refuse``, which ends the call at once.
    It reads the request as raw bytes: a refused caller's message is never parsed."""
    if handler.request_streaming:  # the reflection service
        return grpc.stream_stream_rpc_method_handler(refuse)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(refuse)
    return grpc.unary_unary_rpc_method_handler(refuse)


def rewrapped(
    handler: grpc.RpcMethodHandler,
    unary: Callable[[Behaviour], Behaviour],
    stream: Callable[[Behaviour], Behaviour],
    bidirectional: Callable[[Behaviour], Behaviour] | None = None,
) -> grpc.RpcMethodHandler:
    """``handler`` with its behaviour passed through ``unary``, ``stream`` or, for a stream of
    requests answered by a stream (an upload sent in pieces; the reflection service),
    ``bidirectional``: its behaviour takes the requests as an async iterator. A kind without a
    wrapper given (a client stream with one answer: no service serves one) passes through
    unchanged."""
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            unary(handler.unary_unary),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            stream(handler.unary_stream),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.stream_stream is not None and bidirectional is not None:
        return grpc.stream_stream_rpc_method_handler(
            bidirectional(handler.stream_stream),
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler


async def put_back(first: Any, rest: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """A request stream whose first message was read ahead (to check the call by it), whole again."""
    yield first
    async for item in rest:
        yield item


# What a call runs inside: given the parsed request and the context, a context manager (it may
# abort the call instead, before the method runs).
Scope = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[contextlib.AbstractContextManager[Any]]]


def scoped(handler: grpc.RpcMethodHandler, enter: Scope) -> grpc.RpcMethodHandler:
    """``handler`` whose method runs inside the context manager ``await enter(request, context)``
    gives: who is calling, resolved and checked before the method, and set for it while it runs
    (a streaming method's whole stream)."""

    def unary(behaviour: Behaviour) -> Behaviour:
        async def within(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            with await enter(request, context):
                return await behaviour(request, context)

        return within

    def stream(behaviour: Behaviour) -> Behaviour:
        async def within(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
            with await enter(request, context):
                async with contextlib.aclosing(behaviour(request, context)) as items:
                    async for item in items:
                        yield item

        return within

    def bidirectional(behaviour: Behaviour) -> Behaviour:
        async def within(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            # The call is checked by its first message (an upload's head names its dataset); a
            # stream that sends none is given to the method as it is, to refuse.
            first = await anext(requests, None)
            if first is None:
                items = behaviour(requests, context)
                scope: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()
            else:
                scope = await enter(first, context)
                items = behaviour(put_back(first, requests), context)
            with scope:
                async with contextlib.aclosing(items) as each:
                    async for item in each:
                        yield item

        return within

    return rewrapped(handler, unary, stream, bidirectional)


@contextlib.contextmanager
def holding(variable: contextvars.ContextVar[T], value: T) -> Iterator[None]:
    """``variable`` set to ``value`` inside. A stream the client left is closed by whoever
    finalises its generator, in another context than the one that set the variable: that context
    is gone, and so is what there was to reset."""
    token = variable.set(value)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            variable.reset(token)
