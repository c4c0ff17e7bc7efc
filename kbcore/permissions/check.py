"""Checking a call against its requirements: the objects a request names, and the verdict.

The gateway reads objects from path parameters; the services read them from request fields
(a repeated field names every object in it, and an empty one names all of them: only a
principal who sees everything may ask for that)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kbcore.permissions.roles import Need, Principal, allows
from kbcore.permissions.table import Requirement
from kbcore.words.said import Said, said

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


def refusal_text(principal: Principal, requirement: Requirement) -> Said:
    """What a person reads when refused: which kind of object, and why."""
    need = requirement.need
    if need in _PLAIN_REFUSALS:
        return said(_PLAIN_REFUSALS[need])
    thing = "dataset" if need.value.startswith("dataset") else "application"
    if need.value.endswith("write") or need is Need.CHAT_ASK:
        return said(f"your_account_may_not_change_{thing}")
    return said(f"{thing}_not_among_those_your_account")


_PLAIN_REFUSALS = {
    Need.ADMIN: "only_administrator_may_do",
    Need.DATASET_CREATE: "only_administrator_editor_may_create_datasets",
    Need.APPLICATION_CREATE: "only_administrator_editor_may_create_applications",
    Need.SIGNED_IN: "acts_person_own_account_sign_username",
    Need.MODEL_READ: "only_people_who_operate_knowledge_base",
    Need.ANY_CALLER: "send_credentials_authorization_bearer_token",
}
