"""How a question that failed is told: one sentence for the caller's stream and the record, and
the cause for the operator (docs/languages.md, "Refusals and errors").

The sentence names no address, gRPC status text or stack: an upstream's words pass on only when a
service of ours said them (``kbcore.rpc.error_mapping.from_upstream``), a model endpoint's only as
its kind's sentence (``kbcore.models.failures``), a fault of ours only as an error id. Every
failure (what the caller gets as a 5xx) carries an error id, so a visitor who quotes the sentence
leads the operator to the log line with the cause; a refusal the caller can act on (a question
too long for the retrieval service) and a full disk, which their sentence tells whole, carry none.

The cause is logged under the id, and kept with the record for the operator
(``RecordDetails.error_detail``, which only the conversation log shows): what kind of failure it
was and its own words (an upstream's code and grpc's text, a model endpoint's detail without its
key, a database driver's first line) but, for a fault of ours, only the exception's type: its
words can quote SQL and stored values, and its traceback is in the log under the id. Never a stack.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import grpc

from kbcore.db.faults import is_outage
from kbcore.db.tables import RecordStatus
from kbcore.error_ids import error_id_in, new_error_id, with_error_id
from kbcore.models.base import ModelError
from kbcore.refusals.error_catalogue import refusal_for_status, refusal_of
from kbcore.rpc.error_mapping import RpcError, as_rpc_error, from_upstream
from kbcore.words.said import Said, said

log = logging.getLogger(__name__)

CLIENT_GONE = said("client_went_away_before_answer_ended")
STOPPED_BY_USER = said("stopped_by_user")
# What the reader is told when the context or retrieval service failed (the answer page reads it as 503).
UPSTREAM_FAILED = said("upstream_service_failed_2")
DETAIL_CHARS = 500  # the operator's detail is a line to read, not a dump


@dataclass(frozen=True)
class Ending:
    """How a question ended: the record's status and error, what the caller is told, and the
    cause for the operator."""

    status: str
    error: Said | None = None
    raise_: BaseException | None = None
    detail: str = ""


def ending_for(error: BaseException, chat_id: str) -> Ending:
    """The record's status for a question that ended with ``error``, and the status to raise."""
    if isinstance(error, asyncio.CancelledError):
        return Ending(RecordStatus.STOPPED, CLIENT_GONE)
    where = f"question on chat {chat_id}"
    detail = operator_detail(error)
    told = (
        from_upstream(error, UPSTREAM_FAILED) if isinstance(error, grpc.aio.AioRpcError) else as_rpc_error(error, where)
    )
    failure = _with_error_id(told, where, detail)
    return Ending(RecordStatus.FAILED, failure.words, failure, detail)


def _with_error_id(failure: RpcError, where: str, detail: str) -> RpcError:
    """``failure`` as the reader gets it: a failure whose words carry no error id yet (a model's
    sentence, an upstream's words) gets one, and the cause is logged under it."""
    refusal = refusal_for_status(failure.code, failure.reason)
    if refusal.http_status < 500 or failure.reason or error_id_in(failure.words):
        return failure
    error_id = new_error_id()
    log.warning("%s failed (error id %s): %s", where, error_id, detail)
    return RpcError(failure.code, with_error_id(failure.words, error_id), failure.reason)


def operator_detail(error: BaseException) -> str:
    """What made the question fail, for the operator's view of the record (never a stack)."""
    if isinstance(error, grpc.aio.AioRpcError):
        detail = f"upstream call {error.code().name}: {error.details() or ''}"
    elif isinstance(error, ModelError):
        detail = f"model endpoint ({error.kind.value}): {error.detail}"
    elif isinstance(error, RpcError):
        detail = f"{error.code.name}: {error.message}"
    elif is_outage(error):  # the driver's words without the statement and its parameters
        lines = str(getattr(error, "orig", None) or error).splitlines() or [""]
        detail = f"database: {lines[0]}"
    elif refusal_of(error) is not None:  # a domain error: its own sentence says it
        detail = str(error)
    else:
        detail = f"a fault of ours: {type(error).__name__} (its traceback is in the service log)"
    return detail[:DETAIL_CHARS]
