"""Domain errors as gRPC statuses, applied by the servicer decorators, and the one rule for
passing an upstream service's refusal on.

A servicer method raises a domain error (``kbcore.errors``); the decorator ends the call with
the code the catalogue (``kbcore.refusals.error_catalogue``) gives it and the error's message (the
catalogue's words when it has none). A database outage (``kbcore.db.faults``) is the
domain's Unavailable, with a message that names no server. Anything else is a fault of ours: it
is logged with its traceback under a short error id, and the caller gets INTERNAL with a
message that names no internals but carries the id, so an operator can find the traceback.
Every status ends the call marked as our words (``kbcore.rpc.own_words``); an upstream status not
so marked is grpc's own text, which ``from_upstream`` never passes on.

A full disk (StorageFull) shares RESOURCE_EXHAUSTED with the quotas, as gRPC means that code
to be; the call's trailing metadata then carries the reason (``kbcore.refusals.reasons``), so the
gateway answers 507 rather than 429, and a service passing an upstream refusal on keeps it. A
refusal that knows when to try again (``RateLimited.retry_after``) carries the seconds there too.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc

from kbcore.db.faults import as_unavailable, is_disk_full, is_outage
from kbcore.error_ids import internal_message, new_error_id, with_error_id
from kbcore.errors import Busy, RateLimited
from kbcore.refusals.error_catalogue import INTERNAL_MESSAGE, refusal_of
from kbcore.refusals.reasons import REASON_KEY, RETRY_AFTER_KEY, reason_in, retry_after_in
from kbcore.refusals.status_details import details_entry, words_in
from kbcore.rpc.own_words import ours, withheld
from kbcore.words.said import Said, said, said_in

log = logging.getLogger(__name__)

FAILED_BECAUSE = "failed_because"  # "{failed}: {words}": what could not be done, then why

# grpc ships no type information; servicer methods name their context with this alias.
Context: TypeAlias = Any

# An upstream refusal a service's caller gets as it is: about what the caller sent or named,
# about the data, or the caller's own deadline running out.
CALLERS_OWN = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.OUT_OF_RANGE,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.DATA_LOSS,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)


class RpcError(Exception):
    """A status decided elsewhere, passed on as it is (an upstream service's refusal), with its
    words, the reason its trailing metadata gave ("" for none) and the seconds to wait (None: not
    said)."""

    def __init__(self, code: grpc.StatusCode, words: Said, reason: str = "", retry_after: int | None = None) -> None:
        super().__init__(words)
        self.code = code
        self.words = words
        self.reason = reason
        self.retry_after = retry_after

    @property
    def message(self) -> str:
        """The words in English: what logs and gRPC callers read."""
        return str(self.words)

    @classmethod
    def passed_on(cls, error: grpc.aio.AioRpcError, words: Said) -> RpcError:
        """An upstream call's refusal as this service passes it on: its code, its reason, and its
        words (``words`` where it gave none)."""
        trailing = error.trailing_metadata()
        return cls(error.code(), words_in(trailing) or words, reason_in(trailing), retry_after_in(trailing))

    def trailing_metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        reason = ((REASON_KEY, self.reason),) if self.reason else ()
        wait = ((RETRY_AFTER_KEY, str(self.retry_after)),) if self.retry_after is not None else ()
        return (*reason, *wait, details_entry(self.code, self.words))


def from_upstream(error: grpc.aio.AioRpcError, failed: Said) -> RpcError:
    """An upstream service's refusal as a service passes it to its own caller, the one rule for
    every service in the middle. A refusal the caller can act on (``CALLERS_OWN``) or one with a
    reason (a full disk: the same request succeeds once space is back) keeps its code, reason and
    words. Anything else (the upstream down, broken, or refusing this service itself) is not the
    caller's to fix: UNAVAILABLE, its words after ``failed``, which says what could not be done.
    Words that are not a service's of ours (grpc's own: "failed to connect to all addresses; …
    ipv4:127.0.0.1:…") are never passed on: ``failed`` goes instead, with an error id the log
    line holding them carries (``kbcore.rpc.own_words``)."""
    trailing = error.trailing_metadata()
    kept = error.code() in CALLERS_OWN or bool(reason_in(trailing))
    code = error.code() if kept else grpc.StatusCode.UNAVAILABLE
    words = ours(error)
    if words is None:
        return RpcError(code, withheld(error, failed, str(failed)))
    if kept:
        return RpcError.passed_on(error, failed)
    return RpcError(code, said(FAILED_BECAUSE, failed=failed, words=words))


def status_of(error: BaseException) -> tuple[grpc.StatusCode, Said]:
    """The status code and words a caller gets for ``error`` (INTERNAL_MESSAGE, without an id,
    for a fault: ``as_rpc_error`` logs it and adds one). A domain error raised with no words of
    its own says its refusal's."""
    if isinstance(error, RpcError):
        return error.code, error.words
    error = as_unavailable(error)
    refusal = refusal_of(error)
    if refusal is None:
        return grpc.StatusCode.INTERNAL, INTERNAL_MESSAGE
    return refusal.grpc_code, said_in(error) or refusal.message


def reason_of(error: BaseException) -> str:
    """The reason the caller is given beside the status code for ``error`` ("" for none)."""
    if isinstance(error, RpcError):
        return error.reason
    refusal = refusal_of(as_unavailable(error))
    return refusal.reason if refusal else ""


def as_rpc_error(error: BaseException, where: str) -> RpcError:
    """The status for ``error``; a fault of ours is logged here, with its traceback, under a new
    error id that the caller's message carries, and so is a database outage, with the driver's
    words (``kbcore.error_ids``)."""
    code, message = status_of(error)
    if code == grpc.StatusCode.INTERNAL and not isinstance(error, RpcError):
        error_id = new_error_id()
        log.error("%s failed (error id %s)", where, error_id, exc_info=error)
        message = internal_message(error_id)
    elif is_disk_full(error):
        log.warning("%s: the database's disk is full: %s", where, error)
    elif is_outage(error):  # the driver's words name the server: logged under the id the caller reads
        error_id = new_error_id()
        log.warning("%s: the database is unavailable (error id %s): %s", where, error_id, error)
        message = with_error_id(message, error_id)
    return RpcError(code, message, reason_of(error), retry_after_of(error))


def retry_after_of(error: BaseException) -> int | None:
    """The seconds the caller is told to wait after ``error`` (None: not said)."""
    if isinstance(error, RpcError | RateLimited | Busy) and error.retry_after is not None:
        return max(1, error.retry_after)
    return None


async def abort_for(context: grpc.aio.ServicerContext[Any, Any], where: str, error: BaseException) -> None:
    """End the call being served with the status for ``error`` and its reason, if any (the one
    place a call is aborted for a domain error or a fault)."""
    failure = as_rpc_error(error, where)
    # The words in the details mark them as ours: whoever receives the status may pass them on
    # (``kbcore.rpc.own_words``).
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
