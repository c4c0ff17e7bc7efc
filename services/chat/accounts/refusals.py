"""The refusals of user management that say "not in this state": a username (or an editor's
chosen application id) taken already, a change that would leave nobody to administer the
deployment, a link for a deactivated account. Each is the catalogue's ``Conflict`` (ABORTED over
gRPC, 409 over HTTP), with a sentence that says what to do instead."""

from __future__ import annotations

from kbcore.errors import Conflict
from kbcore.words.said import Said, said

LAST_ADMINISTRATOR = said("last_active_administrator_make_another_user")


def username_taken(username: str) -> Conflict:
    return Conflict(said("username_taken_already_choose_another", username=f"{username!r}"))


def last_administrator() -> Conflict:
    return Conflict(LAST_ADMINISTRATOR)


def already_exists(words: Said) -> Conflict:
    return Conflict(words)


def failed_precondition(words: Said) -> Conflict:
    return Conflict(words)
