"""The one table from domain errors to gRPC status codes, applied by the servicer decorators.

A servicer method raises a domain error (``kbcore.errors``); the decorator ends the call with
the table's code and the error's message. Anything else is a fault of ours: it is logged with
its traceback and the caller gets INTERNAL with a message that names no internals.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc

from kbcore import errors

log = logging.getLogger(__name__)

# grpc ships no type information; servicer methods name their context with this alias.
Context: TypeAlias = Any

INTERNAL_MESSAGE = "internal error; the service log has the details"

# Most specific first: the first class an error is an instance of decides its code.
STATUS_CODES: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (errors.InvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.TooLong, grpc.StatusCode.OUT_OF_RANGE),
    (errors.NotFound, grpc.StatusCode.NOT_FOUND),
    (errors.Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (errors.PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (errors.QuotaExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.Conflict, grpc.StatusCode.ABORTED),
    (errors.CorruptData, grpc.StatusCode.DATA_LOSS),
    (errors.Unavailable, grpc.StatusCode.UNAVAILABLE),
)


class RpcError(Exception):
    """A status decided elsewhere, passed on as it is (an upstream service's refusal)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and message a caller gets for ``error``."""
    if isinstance(error, RpcError):
        return error.code, error.message
    for error_type, code in STATUS_CODES:
        if isinstance(error, error_type):
            return code, str(error)
    return grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE


async def _abort(context: grpc.aio.ServicerContext[Any, Any], method: str, error: Exception) -> None:
    code, message = status_of(error)
    if code == grpc.StatusCode.INTERNAL:
        log.error("%s failed", method, exc_info=error)
    await context.abort(code, message)


def unary_errors(method: Any) -> Any:
    """End a unary servicer method's call with the table's status for what it raised."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await method(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await _abort(context, method.__qualname__, error)

    return wrapper


def stream_errors(method: Any) -> Any:
    """The same for server-streaming methods (async generators)."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        try:
            async for item in method(self, request, context):
                yield item
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await _abort(context, method.__qualname__, error)

    return wrapper
