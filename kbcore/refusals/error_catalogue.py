"""The one error catalogue: how every domain error (``kbcore.errors``) shows on every surface.

Each entry says, once, what a refusal is as a gRPC status (code, and the trailing-metadata reason
where the code alone is shared), as an HTTP status, as an OpenAI error (type and code), and in
words when the error itself carries none. The servicer decorators (``kbcore.rpc.error_mapping``)
read it from the domain side, the gateway (``gateway.errors``, ``gateway.openai.wire``) from the
gRPC side, so the surfaces cannot drift apart. Statuses no domain error has (gRPC's own: a
deadline, a cancelled call, an unknown method; and a fault of ours) have an HTTP status and
words only; their OpenAI shape is the one for their HTTP status.

It lives apart from ``kbcore.errors`` so that the domain errors stay free of any transport, and
below ``kbcore.rpc`` (``kbcore.refusals``) so that the gateway, which holds no database code,
may import it.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from kbcore import errors
from kbcore.refusals.reasons import BUSY, STORAGE_FULL
from kbcore.words.said import Said, said

INTERNAL_MESSAGE = said("internal_error_service_log_has_details")
REQUEST_REFUSED = said("service_refused_request")  # a client error no refusal here describes


@dataclass(frozen=True)
class Refusal:
    """One kind of refusal as every surface shows it."""

    grpc_code: grpc.StatusCode
    http_status: int
    openai_type: str
    openai_code: str | None
    message: Said  # what the caller reads when the error carries no words of its own
    reason: str = ""  # tells it apart from the other refusals sharing its gRPC code
    # The message (with a ``{shown}`` hole) put around the service's words over HTTP: a
    # backend's own sentence ("the database is unavailable") does not say that it is a service
    # behind the gateway that failed.
    http_lead: str = ""

    def http_message(self, details: Said | None) -> Said:
        """What an HTTP caller reads for a status that came with ``details``."""
        shown = details or self.message
        return said(self.http_lead, shown=shown) if self.http_lead else shown


# Most specific first: the first class an error is an instance of decides its refusal.
CATALOGUE: tuple[tuple[type[Exception], Refusal], ...] = (
    (
        errors.InvalidRequest,
        Refusal(grpc.StatusCode.INVALID_ARGUMENT, 400, "invalid_request_error", None, said("request_invalid")),
    ),
    (
        errors.TooLong,
        Refusal(
            grpc.StatusCode.OUT_OF_RANGE,
            413,
            "invalid_request_error",
            "question_too_long",
            said("input_longer_service_accepts"),
        ),
    ),
    (
        errors.NotFound,
        Refusal(
            grpc.StatusCode.NOT_FOUND, 404, "not_found_error", "not_found", said("what_request_names_does_not_exist")
        ),
    ),
    (
        errors.Unauthenticated,
        Refusal(
            grpc.StatusCode.UNAUTHENTICATED,
            401,
            "authentication_error",
            "invalid_api_key",
            said("missing_unknown_credentials"),
        ),
    ),
    (
        errors.PermissionDenied,
        Refusal(grpc.StatusCode.PERMISSION_DENIED, 403, "permission_error", None, said("caller_may_not_do")),
    ),
    (
        errors.QuotaExhausted,
        Refusal(grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "rate_limit_error", "quota_exceeded", said("quota_used_up")),
    ),
    (
        errors.RateLimited,
        Refusal(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            429,
            "rate_limit_error",
            "quota_exceeded",
            said("too_many_requests_try_again_later"),
        ),
    ),
    (
        errors.Conflict,
        Refusal(
            grpc.StatusCode.ABORTED,
            409,
            "conflict_error",
            "chat_busy",
            said("request_collides_work_progress_try_again"),
        ),
    ),
    (
        errors.CorruptData,
        Refusal(grpc.StatusCode.DATA_LOSS, 500, "server_error", None, said("stored_data_cannot_be_used")),
    ),
    (
        errors.StorageFull,
        Refusal(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            507,
            "server_error",
            "insufficient_storage",
            errors.DISK_FULL,
            reason=STORAGE_FULL,
        ),
    ),
    (
        errors.Unavailable,
        Refusal(
            grpc.StatusCode.UNAVAILABLE,
            503,
            "server_error",
            None,
            said("service_depends_failed_try_again_later"),
            http_lead="backend_service_unavailable_2",
        ),
    ),
    (
        errors.Busy,
        Refusal(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            503,
            "server_error",
            None,
            said("service_busy_other_work_kind_try"),
            reason=BUSY,
        ),
    ),
)

# gRPC's own statuses and a fault of ours: (HTTP status, words when the status carries none).
WITHOUT_DOMAIN_ERROR: dict[grpc.StatusCode, tuple[int, Said]] = {
    grpc.StatusCode.INTERNAL: (500, INTERNAL_MESSAGE),
    grpc.StatusCode.UNKNOWN: (500, said("service_failed_unknown_way")),
    grpc.StatusCode.UNIMPLEMENTED: (500, said("service_does_not_offer_call")),
    grpc.StatusCode.CANCELLED: (499, said("call_was_cancelled")),
    grpc.StatusCode.DEADLINE_EXCEEDED: (504, said("service_did_not_answer_time")),
    grpc.StatusCode.FAILED_PRECONDITION: (400, said("request_cannot_be_done_present_state")),
    grpc.StatusCode.ALREADY_EXISTS: (409, said("exists_already")),
}


def refusal_of(error: BaseException) -> Refusal | None:
    """The catalogue's refusal for a domain error; None for anything else (a fault)."""
    for error_type, refusal in CATALOGUE:
        if isinstance(error, error_type):
            return refusal
    return None


def _by_status() -> dict[tuple[grpc.StatusCode, str], Refusal]:
    """Refusals by gRPC code and reason. Domain errors sharing both (a used-up quota, too many
    sign-ins) show the same on HTTP and OpenAI, so the first of them stands for all."""
    table: dict[tuple[grpc.StatusCode, str], Refusal] = {}
    for _, refusal in CATALOGUE:
        table.setdefault((refusal.grpc_code, refusal.reason), refusal)
    for code, (status, message) in WITHOUT_DOMAIN_ERROR.items():
        table[(code, "")] = Refusal(code, status, openai_type(status), openai_code(status), message)
    return table


def openai_type(http_status: int) -> str:
    """OpenAI's error type for an HTTP status: the domain refusal's with that status, else
    OpenAI's own split (the server's fault, or the request's)."""
    for _, refusal in CATALOGUE:
        if refusal.http_status == http_status:
            return refusal.openai_type
    return "server_error" if http_status >= 500 else "invalid_request_error"


def openai_code(http_status: int) -> str | None:
    """OpenAI's error code for an HTTP status: the domain refusal's with that status, else none."""
    for _, refusal in CATALOGUE:
        if refusal.http_status == http_status:
            return refusal.openai_code
    return None


def words_for_http_status(http_status: int) -> Said:
    """The general words for a refusal with an HTTP status: a 500 is our fault in general (not
    the stored data's, whose refusal shares it); else the first domain refusal's with that
    status, else the words of the gRPC status that maps to it, else the server's or the
    request's fault in general."""
    if http_status == 500:
        return INTERNAL_MESSAGE
    for _, refusal in CATALOGUE:
        if refusal.http_status == http_status:
            return refusal.message
    for status, message in WITHOUT_DOMAIN_ERROR.values():
        if status == http_status:
            return message
    return INTERNAL_MESSAGE if http_status >= 500 else REQUEST_REFUSED


def refusal_for_status(code: grpc.StatusCode, reason: str = "") -> Refusal:
    """The refusal a gRPC status stands for; a reason no entry knows reads as no reason, and a
    code no entry knows as UNKNOWN."""
    return _BY_STATUS.get((code, reason)) or _BY_STATUS.get((code, "")) or _BY_STATUS[(grpc.StatusCode.UNKNOWN, "")]


_BY_STATUS = _by_status()
