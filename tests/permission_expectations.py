"""What each kind of caller should get for each need, written out by hand: the expectations both
permission matrices (HTTP routes and gRPC methods) check against. Never computed from
``kbcore.permissions.roles.allows``: a matrix checked against the rule it tests proves nothing."""

from __future__ import annotations

from kbcore.permissions.roles import Need
from kbcore.permissions.table import Requirement

ANONYMOUS, VISITOR, KEY, VIEWER, OTHER, EDITOR, ADMIN = (
    "anonymous",
    "visitor",
    "application key",
    "viewer",
    "editor of another",
    "editor",
    "administrator",
)
CALLERS = (ANONYMOUS, VISITOR, KEY, VIEWER, OTHER, EDITOR, ADMIN)
PASSWORD = "matrix-password-1"

# One letter per caller, in CALLERS' order. Y: let through. N: refused. G: let through unless the
# request names an object (in its path or a request field the table reads, or a chat the chat
# service checks) that is not the caller's: every request names dataset A and application A,
# which the viewer and the editor are granted, the key and the visitor belong to, and the
# administrator sees; only the editor of dataset B and application B is a stranger to them.
EXPECT: dict[Need, str] = {
    Need.PUBLIC: "YYYYYYY",
    Need.ANY_CALLER: "NGGGGGY",
    Need.SIGNED_IN: "NNNYYYY",
    Need.CHAT_ASK: "NGGNGGY",
    Need.CHAT_READ: "NGGGGGY",
    Need.LOG_READ: "NNGGGGY",
    Need.APPLICATION_READ: "NNNGGGY",
    Need.APPLICATION_WRITE: "NNNNGGY",
    Need.APPLICATION_CREATE: "NNNNYYY",
    Need.DATASET_READ: "NNNGGGY",
    Need.DATASET_WRITE: "NNNNGGY",
    Need.DATASET_CREATE: "NNNNYYY",
    Need.MODEL_READ: "NNNYYYY",
    Need.ADMIN: "NNNNNNY",
}


def expected_through(
    requirements: tuple[Requirement, ...], caller: str, *, reaches: bool = False, visitors_only: bool = False
) -> bool:
    """The hand-written expectation for a route or method: every requirement must let the caller
    through. ``reaches``: the service checks the chat the call names; ``visitors_only``: only a
    share-link visitor has what it lists (its own chats)."""
    if visitors_only and caller != VISITOR:
        return False
    column = CALLERS.index(caller)
    for requirement in requirements:
        letter = EXPECT[requirement.need][column]
        names_object = bool(requirement.object_from) or reaches
        if letter == "N" or (letter == "G" and names_object and caller == OTHER):
            return False
    return True
