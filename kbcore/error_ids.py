"""Error ids: how the person who reads a failure and the operator who reads the log find the same
event.

What a person reads of a failure never holds an address, a gRPC status text or a stack. Where the
cause is kept from them (a fault of ours, a database outage, a backend that could not be reached
or answered in words that are not ours, and every failure that ends an answer), their words
carry a short id, and the log line that holds the cause carries the same id. The id is a value of
the words (``kbcore.words.said``), so the reader's language puts it in like any other.
"""

from __future__ import annotations

import uuid

from kbcore.words.said import Said, said

WITH_ID = "error_id_service_log_has_details"  # "{words} (error id {error_id}); the service log …"
INTERNAL = "internal_error"


def new_error_id() -> str:
    """A fresh id: twelve hex digits, short enough to read out, long enough never to repeat."""
    return uuid.uuid4().hex[:12]


def with_error_id(words: Said, error_id: str) -> Said:
    """``words`` as the reader gets them: with the id the log line that has the cause carries."""
    return said(WITH_ID, words=words, error_id=error_id)


def internal_message(error_id: str) -> Said:
    """What a caller reads for a fault of ours: nothing of it but the id its traceback is logged under."""
    return with_error_id(said(INTERNAL), error_id)


def error_id_in(words: Said) -> str | None:
    """The error id ``words`` already carry (a service's, passed on, perhaps inside another's
    words); None when they carry none."""
    if words.code == WITH_ID and isinstance(found := words.values.get("error_id"), str):
        return found
    for value in words.values.values():
        if isinstance(value, Said) and (inner := error_id_in(value)) is not None:
            return inner
    return None
