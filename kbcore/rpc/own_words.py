"""Whose words a gRPC status carries: ours, or the transport's.

A status one of our services ends a call with (``kbcore.rpc.error_mapping.abort_for``, the
credential check) carries a sentence written for people, and says so in its trailing metadata
(``OWN_WORDS``). Any other status is grpc's own (a backend that cannot be reached: "failed to
connect to all addresses; last error: … ipv4:127.0.0.1:…", a connection reset, a deadline, a
message too large) or a stranger's: its text names addresses and internals, so it is never passed
on, whatever its code. Whoever receives such a status (a service calling another, the gateway)
logs the text under a new error id and passes on its own words with that id
(``kbcore.error_ids``). This is the one place that tells the two apart; the gateway imports it,
so it holds no database code.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import grpc

from kbcore.error_ids import new_error_id, with_error_id

log = logging.getLogger(__name__)

OWN_WORDS_KEY = "kb-words"
OWN_WORDS = (OWN_WORDS_KEY, "ours")
# What a status grpc itself ended a call with means, in words a person reads.
TRANSPORT_WORDS = {
    grpc.StatusCode.UNAVAILABLE: "a backend service is unavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "a backend service did not answer in time",
    grpc.StatusCode.CANCELLED: "the call was cancelled",
}
BACKEND_FAILED = "a backend service failed"


def said_by_us(metadata: Iterable[tuple[str, Any]] | None) -> bool:
    """Whether a call's trailing metadata says its status's words are one of our services'."""
    return any(key == OWN_WORDS_KEY for key, _ in metadata or ())


def transport_words(code: grpc.StatusCode) -> str:
    """What a status grpc itself gave means, for a reader: never its text."""
    return TRANSPORT_WORDS.get(code, BACKEND_FAILED)


def withheld(error: grpc.aio.AioRpcError, words: str, where: str) -> str:
    """``words`` with a new error id, for a status whose own text is not ours: that text (and its
    code) is logged here under the id, at ``where``, and goes no further."""
    error_id = new_error_id()
    log.warning("%s: %s (error id %s): %s", where, error.code().name, error_id, error.details())
    return with_error_id(words, error_id)
