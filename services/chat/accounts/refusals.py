"""The refusals of user management that say "not in this state": a username (or an editor's
chosen application id) taken already, a change that would leave nobody to administer the
deployment, a link for a deactivated account. Each is the catalogue's ``Conflict`` (ABORTED over
gRPC, 409 over HTTP), with a sentence that says what to do instead."""

from __future__ import annotations

from kbcore.errors import Conflict

LAST_ADMINISTRATOR = (
    "this is the last active administrator: make another user an administrator first,"
    " or nobody could manage users any more"
)


def username_taken(username: str) -> Conflict:
    return Conflict(f"the username {username!r} is taken already; choose another")


def last_administrator() -> Conflict:
    return Conflict(LAST_ADMINISTRATOR)


def already_exists(message: str) -> Conflict:
    return Conflict(message)


def failed_precondition(message: str) -> Conflict:
    return Conflict(message)
