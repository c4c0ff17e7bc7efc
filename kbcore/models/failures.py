"""What a caller may read when a model endpoint fails, and what only the operator's log gets.

An endpoint's own error text can echo part of the API key ("Incorrect API key provided:
sk-abc***"), and a connection error names the host and port behind the service. Neither may
reach a visitor, a stored record or an export, so a failure is told in one fixed sentence per
kind of failure, the same on every surface; what actually happened (scrubbed of anything
key-like) is written to the log of the process that saw it, once, when the failure is made.
"""

from __future__ import annotations

import logging
from enum import StrEnum

from kbcore.models.scrub import shown
from kbcore.words.said import Said, said

log = logging.getLogger(__name__)


class FailureKind(StrEnum):
    UNAVAILABLE = "unavailable"  # no connection, a cut stream, 429 or 5xx: it may work later
    REFUSED = "refused"  # a 4xx: the endpoint will not do it as asked (key, model, request)
    TIMEOUT = "timeout"  # no answer within the time allowed
    UNUSABLE = "unusable"  # an answer that is not one (not JSON, empty, cut at the token limit)


SENTENCES: dict[FailureKind, Said] = {
    FailureKind.UNAVAILABLE: said("model_endpoint_unavailable_try_again_later"),
    FailureKind.REFUSED: said("model_endpoint_refused_request"),
    FailureKind.TIMEOUT: said("model_endpoint_took_too_long"),
    FailureKind.UNUSABLE: said("model_endpoint_answer_could_not_be"),
}

_TIMEOUT_STATUSES = frozenset({408, 504})


def status_kind(status: int) -> FailureKind:
    """The kind of an HTTP error status: too slow, down or overloaded, or a refusal."""
    if status in _TIMEOUT_STATUSES:
        return FailureKind.TIMEOUT
    if status == 429 or status >= 500:
        return FailureKind.UNAVAILABLE
    return FailureKind.REFUSED


def reported(kind: FailureKind, detail: str, secret: str | None = None) -> Said:
    """Log what happened (without the key) for the operator; the kind's sentence for everyone else."""
    log.warning("model endpoint failure (%s): %s", kind.value, shown(detail, secret))
    return SENTENCES[kind]
