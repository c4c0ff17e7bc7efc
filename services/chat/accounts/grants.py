"""Roles and grants as stored (``user_account.role``, ``user_grant``) and as the permission rule
reads them (``kbcore.permissions.roles.Principal``): one place that turns one into the other."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kbcore.db.tables import UserAccount, UserGrant
from kbcore.permissions.roles import Kind, Principal, Role

DATASET = "dataset"
APPLICATION = "application"
GRANT_KINDS = (DATASET, APPLICATION)
MAX_OBJECT_ID = 36  # the width of ``user_grant.object_id`` (our ids are UUIDs)


@dataclass(frozen=True, order=True)
class GrantSpec:
    """One grant as a request names it, checked."""

    kind: str  # DATASET or APPLICATION
    object_id: str


@dataclass(frozen=True)
class UserView:
    """A user with their grants, as lists and WhoAmI show them."""

    account: UserAccount
    grants: tuple[GrantSpec, ...]


def specs_of(rows: Iterable[UserGrant]) -> tuple[GrantSpec, ...]:
    return tuple(sorted(GrantSpec(row.object_kind, row.object_id) for row in rows))


def principal_of(account: UserAccount, grants: Iterable[GrantSpec]) -> Principal:
    """The principal a user's token names: their role and what is granted to them."""
    held = tuple(grants)
    return Principal(
        kind=Kind.USER,
        role=Role(account.role),
        user_id=account.id,
        username=account.username,
        datasets=frozenset(g.object_id for g in held if g.kind == DATASET),
        applications=frozenset(g.object_id for g in held if g.kind == APPLICATION),
    )
