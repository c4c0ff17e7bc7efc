"""The entry guard of a gRPC service: what every call passes before any of its code runs.

* Text with a NUL character is refused (INVALID_ARGUMENT, naming the field): PostgreSQL cannot
  store it and answered with the SQL statement and its parameters; SQLite would store it
  silently. Checked once here, for every string of every request, so no method can forget.
* Whatever escapes the layers beneath it (the caller interceptor's token lookup runs before any
  servicer decorator) ends with the one status table's code: a database outage is UNAVAILABLE,
  anything else INTERNAL with an error id, never an exception's text.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from kbcore.errors import InvalidRequest
from kbcore.rpc.error_mapping import abort_for
from kbcore.rpc.handlers import CallMetadata, MethodInterceptor, rewrapped
from kbcore.words.said import said

NUL = "\x00"


def refuse_nul(message: Message, prefix: str = "") -> None:
    """InvalidRequest when any string in ``message`` (nested, repeated, map keys and values)
    holds a NUL character."""
    for field, value in message.ListFields():
        name = f"{prefix}{field.name}"
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            _check_map(field, value, name)
        elif field.is_repeated:
            for item in value:
                _check_value(field, item, name)
        else:
            _check_value(field, value, name)


def _check_map(field: FieldDescriptor, value: Any, name: str) -> None:
    entry = field.message_type
    assert entry is not None
    for key, item in value.items():
        _check_value(entry.fields_by_name["key"], key, name)
        _check_value(entry.fields_by_name["value"], item, name)


def _check_value(field: FieldDescriptor, value: Any, name: str) -> None:
    if field.type == FieldDescriptor.TYPE_STRING and NUL in value:
        raise InvalidRequest(said("must_not_contain_nul_characters_2", name=name))
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        refuse_nul(value, f"{name}.")


class EntryGuard(MethodInterceptor):
    """Refuses NUL text and maps escaped errors, for every method (a stream of requests: in each
    request, as the method reads it).
    ``build_server`` installs it on every server, after the credential check and before the
    service's own interceptors, so it sees what they raise."""

    def intercepted(self, handler: grpc.RpcMethodHandler, method: str, metadata: CallMetadata) -> grpc.RpcMethodHandler:
        return rewrapped(
            handler,
            lambda b: _guarded_unary(b, method),
            lambda b: _guarded_stream(b, method),
            lambda b: _guarded_requests(b, method),
        )


def _guarded_unary(behaviour: Any, method: str) -> Any:
    async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            if isinstance(request, Message):
                refuse_nul(request)
            return await behaviour(request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await abort_for(context, method, error)

    return guarded


def _guarded_stream(behaviour: Any, method: str) -> Any:
    if inspect.iscoroutinefunction(behaviour):  # a stream written with ``context.write`` (health's Watch)
        return _guarded_unary(behaviour, method)

    async def guarded(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        try:
            if isinstance(request, Message):
                refuse_nul(request)
            async with contextlib.aclosing(behaviour(request, context)) as items:
                async for item in items:
                    yield item
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await abort_for(context, method, error)

    return guarded


async def _nul_free(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """A request stream whose every message is checked for NUL text as the method reads it."""
    async for request in requests:
        if isinstance(request, Message):
            refuse_nul(request)
        yield request


def _guarded_requests(behaviour: Any, method: str) -> Any:
    """A stream of requests answered by a stream: guarded as a stream, each request checked as it
    is read. (grpc tells an async handler by its function's kind: these stay ``async def``.)"""
    if inspect.iscoroutinefunction(behaviour):
        unary = _guarded_unary(behaviour, method)

        async def called(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            return await unary(_nul_free(requests), context)

        return called
    stream = _guarded_stream(behaviour, method)

    async def streamed(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        async with contextlib.aclosing(stream(_nul_free(requests), context)) as items:
            async for item in items:
                yield item

    return streamed
