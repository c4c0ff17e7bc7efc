"""The audit trail's writing side: who is acting in this call, and one row per state-changing
action, added to the session of the change it records so that both commit or neither does.

Each service's caller interceptor sets the actor for the call (``acting``) from what it resolved:
the chat service from the caller's token, the retrieval service from the principal the gateway
sent; the client address comes from the gateway in ``kb-client-address``. A change made by one
of the deployment's own processes for itself (the demo seeder, a re-embedding job) has the
actor ``service``. What is recorded: docs/access.md, "The audit trail". Never a secret or
document text: ``detail`` names what changed, not the values.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from kbcore.db.tables import AuditEvent
from kbcore.permissions.roles import Kind, Principal

DETAIL_LIMIT = 500
NAME_LIMIT = 200


@dataclass(frozen=True)
class Actor:
    kind: str  # user, operator, application, visitor, service
    id: str = ""
    name: str = ""
    address: str = ""


SERVICE = Actor("service")
_ACTOR: contextvars.ContextVar[Actor] = contextvars.ContextVar("audit_actor", default=SERVICE)


def actor_of(principal: Principal, address: str = "") -> Actor:
    """The actor a resolved principal is, as the trail names it."""
    if principal.kind is Kind.USER:
        return Actor("user", principal.user_id, principal.username, address)
    if principal.kind is Kind.OPERATOR:
        return Actor("operator", "", "operator", address)
    return Actor(principal.kind.value, principal.application_id, "", address)


def current_actor() -> Actor:
    return _ACTOR.get()


@contextlib.contextmanager
def acting(actor: Actor) -> Iterator[None]:
    """Inside, changes are recorded as ``actor``'s."""
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):  # a stream finalised in another context
            _ACTOR.reset(token)


def record_action(
    session: AsyncSession, action: str, object_kind: str, object_id: str, object_name: str = "", detail: str = ""
) -> None:
    """Adds the audit row of ``action`` (``dataset.delete``, ``user.update`` …) on an object to
    ``session``: it commits with the change it describes."""
    actor = current_actor()
    session.add(
        AuditEvent(
            actor_kind=actor.kind,
            actor_id=actor.id[:64],
            actor_name=actor.name[:64],
            client_address=actor.address[:64],
            action=action,
            object_kind=object_kind,
            object_id=object_id[:64],
            object_name=object_name[:NAME_LIMIT],
            detail=detail[:DETAIL_LIMIT],
        )
    )
