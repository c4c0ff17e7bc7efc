"""Domain errors: what went wrong in words a person understands, with no transport attached.

Each is raised with words (``kbcore.words.said``): a message's code and its values, never a
finished sentence, so every surface shows it in its reader's language; one raised with none
says its refusal's general words. Services raise these; the catalogue (``kbcore.refusals.error_catalogue``) gives each, once, its gRPC status,
HTTP status, OpenAI error and default words, and every surface reads it from there. A fault that
is not one of these (a crashed embedder, a broken store) is an internal error, never the
caller's mistake.
"""

from __future__ import annotations

from kbcore.words.said import Said, said


class Refused(Exception):
    """What every domain error is: an exception whose one argument, when it has one, is its words."""

    def __init__(self, words: Said | None = None) -> None:
        if words is not None and not isinstance(words, Said):
            # A sentence would reach readers of every language in English: refused at once.
            raise TypeError(f"a refusal is raised with words by code, not {type(words).__name__}")
        super().__init__(*(() if words is None else (words,)))

    @property
    def words(self) -> Said | None:
        """The words it was raised with; None: its refusal's general words apply."""
        return self.args[0] if self.args and isinstance(self.args[0], Said) else None


class NotFound(Refused, LookupError):
    """Something a request names does not exist (or the caller may not know that it does)."""


class InvalidRequest(Refused):
    """The request itself is wrong: a missing field, a number out of range, an unreadable file."""


class TooLong(Refused):
    """The input is valid but longer than the service accepts."""


class Unauthenticated(Refused):
    """No credentials, or credentials nobody issued (or that were revoked)."""


class PermissionDenied(Refused):
    """The caller is known but may not do this."""


class QuotaExhausted(Refused):
    """A share link's per-visitor daily question quota is used up."""

    def __init__(self, limit: int) -> None:
        super().__init__(said("share_link_allows_questions_per_visitor", limit=limit))
        self.limit = limit


class RateLimited(Refused):
    """Too many requests of one kind (visitor sign-ins through a share link), or a limit shared by
    many callers (a share link's daily questions from all its visitors) is used up.
    ``retry_after``: the seconds until the limit lets the caller in again, when known (the
    gateway says them in ``Retry-After``)."""

    def __init__(self, words: Said | None = None, retry_after: int | None = None) -> None:
        super().__init__(words)
        self.retry_after = retry_after


class Conflict(Refused):
    """The request collides with work in progress (a busy chat); it may succeed later."""


class Busy(Refused):
    """A budget the whole deployment shares for one kind of work is taken for now (the bytes of
    uploads in flight, ``KB_UPLOAD_BUDGET_MB``): refused at once rather than queued, since
    waiting would hold the caller's connection and its bytes. The server's load rather than the
    caller's excess, so HTTP 503 (not 429); the same request succeeds once others' work ends,
    and ``retry_after`` says when to try again (``Retry-After``)."""

    def __init__(self, words: Said | None = None, retry_after: int | None = None) -> None:
        super().__init__(words)
        self.retry_after = retry_after


class CorruptData(Refused):
    """Stored data cannot be used; retrying will not help."""


class Unavailable(Refused):
    """A dependency (a model endpoint, another service) failed; retrying later may help."""


DISK_FULL = said("server_disk_full_nothing_was_written")


class StorageFull(Unavailable):
    """The disk a write would go to has no room (less free space than the service keeps in
    reserve, or the database said so); nothing was written. The same request succeeds once space
    is back, so code that fails a job or retries on Unavailable treats it the same way."""

    def __init__(self, words: Said = DISK_FULL) -> None:
        super().__init__(words)
