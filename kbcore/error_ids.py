"""Error ids: how the person who reads a failure and the operator who reads the log find the same
event.

What a person reads of a failure never holds an address, a gRPC status text or a stack. Where the
cause is kept from them (a fault of ours, a database outage, a backend that could not be reached
or answered in words that are not ours, and every failure that ends an answer), their sentence
carries a short id, and the log line that holds the cause carries the same id. The sentence's
form is one template, so the gateway puts it in the reader's language like any refusal
(``kbcore.words.refusal_words``).
"""

from __future__ import annotations

import re
import uuid

# The words with the id, as the catalogue keys them: "{words} (error id {error_id}); …".
_WITH_ID = "{words} (error id {error_id}); the service log has the details"
_ID_IN_WORDS = re.compile(r"\(error id ([0-9a-f]{12})\)")


def new_error_id() -> str:
    """A fresh id: twelve hex digits, short enough to read out, long enough never to repeat."""
    return uuid.uuid4().hex[:12]


def with_error_id(words: str, error_id: str) -> str:
    """``words`` as the reader gets them: with the id the log line that has the cause carries."""
    return _WITH_ID.format(words=words, error_id=error_id)


def internal_message(error_id: str) -> str:
    """What a caller reads for a fault of ours: nothing of it but the id its traceback is logged under."""
    return with_error_id("internal error", error_id)


def error_id_in(message: str) -> str | None:
    """The error id ``message`` already carries (a service's, passed on); None when it has none."""
    found = _ID_IN_WORDS.search(message)
    return found.group(1) if found else None
