"""The one table from domain errors to gRPC status codes, applied by the servicer decorators.

A servicer method raises a domain error (``kbcore.errors``); the decorator ends the call with
the table's code and the error's message. A database outage (``kbcore.db.faults``) is the
domain's Unavailable, with a message that names no server. Anything else is a fault of ours: it
is logged with its traceback under a short error id, and the caller gets INTERNAL with a
message that names no internals but carries the id, so an operator can find the traceback.

A full disk (StorageFull) shares RESOURCE_EXHAUSTED with the quotas, as gRPC means that code
to be; the call's trailing metadata then carries the reason (``kbcore.rpc.reasons``), so the
gateway answers 507 rather than 429, and a service passing an upstream refusal on keeps it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc

from kbcore import errors
from kbcore.db.faults import as_unavailable, is_disk_full, is_outage
from kbcore.rpc.reasons import REASON_KEY, STORAGE_FULL, reason_in

log = logging.getLogger(__name__)

# grpc ships no type information; servicer methods name their context with this alias.
Context: TypeAlias = Any

INTERNAL_MESSAGE = "internal error; the service log has the details"


def internal_message(error_id: str) -> str:
    return f"internal error (error id {error_id}); the service log has the details"


# Most specific first: the first class an error is an instance of decides its code.
STATUS_CODES: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (errors.InvalidRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.TooLong, grpc.StatusCode.OUT_OF_RANGE),
    (errors.NotFound, grpc.StatusCode.NOT_FOUND),
    (errors.Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (errors.PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (errors.QuotaExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.RateLimited, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.Conflict, grpc.StatusCode.ABORTED),
    (errors.CorruptData, grpc.StatusCode.DATA_LOSS),
    (errors.StorageFull, grpc.StatusCode.RESOURCE_EXHAUSTED),  # with the reason STORAGE_FULL
    (errors.Unavailable, grpc.StatusCode.UNAVAILABLE),
)


class RpcError(Exception):
    """A status decided elsewhere, passed on as it is (an upstream service's refusal), with the
    reason its trailing metadata gave ("" for none)."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason

    @classmethod
    def passed_on(cls, error: grpc.aio.AioRpcError, message: str = "") -> RpcError:
        """An upstream call's refusal as this service passes it on: its code, its reason, and its
        details (``message`` where it gave none)."""
        return cls(error.code(), error.details() or message, reason_in(error.trailing_metadata()))

    def trailing_metadata(self) -> tuple[tuple[str, str], ...]:
        return ((REASON_KEY, self.reason),) if self.reason else ()


def status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and message a caller gets for ``error`` (INTERNAL_MESSAGE, without an
    id, for a fault: ``as_rpc_error`` logs it and adds one)."""
    if isinstance(error, RpcError):
        return error.code, error.message
    error = as_unavailable(error)
    for error_type, code in STATUS_CODES:
        if isinstance(error, error_type):
            return code, str(error)
    return grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE


def reason_of(error: BaseException) -> str:
    """The reason the caller is given beside the status code for ``error`` ("" for none)."""
    if isinstance(error, RpcError):
        return error.reason
    return STORAGE_FULL if isinstance(as_unavailable(error), errors.StorageFull) else ""


def as_rpc_error(error: BaseException, where: str) -> RpcError:
    """The status for ``error``; a fault of ours is logged here, with its traceback, under a new
    error id that the caller's message carries."""
    code, message = status_of(error)
    if code == grpc.StatusCode.INTERNAL and not isinstance(error, RpcError):
        error_id = uuid.uuid4().hex[:12]
        log.error("%s failed (error id %s)", where, error_id, exc_info=error)
        message = internal_message(error_id)
    elif is_disk_full(error):
        log.warning("%s: the database's disk is full: %s", where, error)
    elif is_outage(error):
        log.warning("%s: the database is unavailable: %s", where, error)
    return RpcError(code, message, reason_of(error))


async def abort_for(context: grpc.aio.ServicerContext[Any, Any], where: str, error: BaseException) -> None:
    """End the call being served with the status for ``error`` and its reason, if any (the one
    place a call is aborted for a domain error or a fault)."""
    failure = as_rpc_error(error, where)
    await context.abort(failure.code, failure.message, trailing_metadata=failure.trailing_metadata())


def unary_errors(method: Any) -> Any:
    """End a unary servicer method's call with the table's status for what it raised."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await method(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await abort_for(context, method.__qualname__, error)

    return wrapper


def stream_errors(method: Any) -> Any:
    """The same for server-streaming methods (async generators)."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        try:
            # Closed with the wrapper: a caller that goes away ends the method's own cleanup at
            # once, not whenever the garbage collector finalizes it.
            async with contextlib.aclosing(method(self, request, context)) as items:
                async for item in items:
                    yield item
        except grpc.aio.AbortError:
            raise
        except Exception as error:
            await abort_for(context, method.__qualname__, error)

    return wrapper
