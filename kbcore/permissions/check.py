"""Checking a call against its requirements: the objects a request names, and the verdict.

The gateway reads objects from path parameters; the services read them from request fields
(a repeated field names every object in it, and an empty one names all of them: only a
principal who sees everything may ask for that)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kbcore.permissions.roles import Need, Principal, allows
from kbcore.permissions.table import Requirement

ALL_OBJECTS = "*"  # what an empty list of ids asks for


def objects_in_request(request: Any, field: str) -> list[str]:
    """The ids ``field`` of a protobuf request names ([""] when the request has no such field);
    a dotted field (``application.id``) reaches into a message field of the request."""
    head, _, rest = field.partition(".")
    if rest and head in request.DESCRIPTOR.fields_by_name:
        return objects_in_request(getattr(request, head), rest)
    if not field or field not in request.DESCRIPTOR.fields_by_name:
        return [""]
    value = getattr(request, field)
    if isinstance(value, str):
        return [value]
    # Read as the servicers read a list of ids (trimmed, blanks dropped): a list of blanks asks
    # for everything, as an empty one does.
    return [str(item).strip() for item in value if str(item).strip()] or [ALL_OBJECTS]


def objects_named(request: Any, requirements: tuple[Requirement, ...]) -> dict[str, list[str]]:
    """The ids each requirement's request field names, for ``first_refused``."""
    return {r.object_from: objects_in_request(request, r.object_from) for r in requirements if r.object_from}


def first_refused(
    principal: Principal, requirements: tuple[Requirement, ...], objects: Mapping[str, list[str]]
) -> Requirement | None:
    """The first requirement ``principal`` does not meet (None: the call may go ahead).
    ``objects`` maps each requirement's ``object_from`` to the ids the call names."""
    for requirement in requirements:
        ids = objects.get(requirement.object_from, [""]) if requirement.object_from else [""]
        if not all(allows(principal, requirement.need, object_id) for object_id in ids):
            return requirement
    return None


def refusal_text(principal: Principal, requirement: Requirement) -> str:
    """What a person reads when refused: which kind of object, and why."""
    need = requirement.need
    if need in _PLAIN_REFUSALS:
        return _PLAIN_REFUSALS[need]
    thing = "dataset" if need.value.startswith("dataset") else "application"
    if need.value.endswith("write") or need is Need.CHAT_ASK:
        return f"your account may not change this {thing}: ask an administrator for editor access to it"
    return f"this {thing} is not among those your account may see"


_PLAIN_REFUSALS = {
    Need.ADMIN: "only an administrator may do this",
    Need.DATASET_CREATE: "only an administrator or an editor may create datasets",
    Need.APPLICATION_CREATE: "only an administrator or an editor may create applications",
    Need.SIGNED_IN: "this acts on a person's own account: sign in with a username and password",
    Need.MODEL_READ: "only people who operate the knowledge base may see its model endpoints",
    Need.ANY_CALLER: "send credentials: Authorization: Bearer <token>",
}
