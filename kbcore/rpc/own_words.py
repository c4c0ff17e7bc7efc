"""Whose words a gRPC status carries: ours, or the transport's.

A status one of our services ends a call with (``kbcore.rpc.error_mapping.abort_for``, the
credential check) carries words written for people, as a message's code and values in the
status's details (``kbcore.refusals.status_details``). Any other status is grpc's own (a backend
that cannot be reached: "failed to connect to all addresses; last error: … ipv4:127.0.0.1:…", a
connection reset, a deadline, a message too large) or a stranger's: its text names addresses and
internals, so it is never passed on, whatever its code. Whoever receives such a status (a service
calling another, the gateway) logs the text under a new error id and passes on its own words
with that id (``kbcore.error_ids``). This is the one place that tells the two apart; the gateway
imports it, so it holds no database code.
"""

from __future__ import annotations

import logging

import grpc

from kbcore.error_ids import new_error_id, with_error_id
from kbcore.refusals.status_details import words_in
from kbcore.words.said import Said, said

log = logging.getLogger(__name__)

# What a status grpc itself ended a call with means, in words a person reads.
TRANSPORT_WORDS = {
    grpc.StatusCode.UNAVAILABLE: "backend_service_unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "backend_service_did_not_answer_time",
    grpc.StatusCode.CANCELLED: "call_was_cancelled",
}
BACKEND_FAILED = "backend_service_failed"


def ours(error: grpc.aio.AioRpcError) -> Said | None:
    """The words of a status one of our services ended a call with; None for any other status."""
    return words_in(error.trailing_metadata())


def transport_words(code: grpc.StatusCode) -> Said:
    """What a status grpc itself gave means, for a reader: never its text."""
    return said(TRANSPORT_WORDS.get(code, BACKEND_FAILED))


def withheld(error: grpc.aio.AioRpcError, words: Said, where: str) -> Said:
    """``words`` with a new error id, for a status whose own text is not ours: that text (and its
    code) is logged here under the id, at ``where``, and goes no further."""
    error_id = new_error_id()
    log.warning("%s: %s (error id %s): %s", where, error.code().name, error_id, error.details())
    return with_error_id(words, error_id)
