"""Domain errors: what went wrong in words a person understands, with no transport attached.

Services raise these; the catalogue (``kbcore.refusals.error_catalogue``) gives each, once, its gRPC status,
HTTP status, OpenAI error and default words, and every surface reads it from there. A fault that
is not one of these (a crashed embedder, a broken store) is an internal error, never the
caller's mistake.
"""

from __future__ import annotations


class NotFound(LookupError):
    """Something a request names does not exist (or the caller may not know that it does)."""


class InvalidRequest(Exception):
    """The request itself is wrong: a missing field, a number out of range, an unreadable file."""


class TooLong(Exception):
    """The input is valid but longer than the service accepts."""


class Unauthenticated(Exception):
    """No credentials, or credentials nobody issued (or that were revoked)."""


class PermissionDenied(Exception):
    """The caller is known but may not do this."""


class QuotaExhausted(Exception):
    """A share link's per-visitor daily question quota is used up."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"this share link allows {limit} questions per visitor per day; try again tomorrow")
        self.limit = limit


class RateLimited(Exception):
    """Too many requests of one kind (visitor sign-ins through a share link), or a limit shared by
    many callers (a share link's daily questions from all its visitors) is used up.
    ``retry_after``: the seconds until the limit lets the caller in again, when known (the
    gateway says them in ``Retry-After``)."""

    def __init__(self, message: str = "", retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Conflict(Exception):
    """The request collides with work in progress (a busy chat); it may succeed later."""


class Busy(Exception):
    """A budget the whole deployment shares for one kind of work is taken for now (the bytes of
    uploads in flight, ``KB_UPLOAD_BUDGET_MB``): refused at once rather than queued, since
    waiting would hold the caller's connection and its bytes. The server's load rather than the
    caller's excess, so HTTP 503 (not 429); the same request succeeds once others' work ends,
    and ``retry_after`` says when to try again (``Retry-After``)."""

    def __init__(self, message: str = "", retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class CorruptData(Exception):
    """Stored data cannot be used; retrying will not help."""


class Unavailable(Exception):
    """A dependency (a model endpoint, another service) failed; retrying later may help."""


DISK_FULL = "the server's disk is full: nothing was written; free some space or ask the operator to"


class StorageFull(Unavailable):
    """The disk a write would go to has no room (less free space than the service keeps in
    reserve, or the database said so); nothing was written. The same request succeeds once space
    is back, so code that fails a job or retries on Unavailable treats it the same way."""

    def __init__(self, message: str = DISK_FULL) -> None:
        super().__init__(message)
