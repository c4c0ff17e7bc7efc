"""Users, roles, grants and personal tokens on the wire (``kb.chat.v1``), and the checks of what
a request names: the one place that knows both the stored words and the proto's enums."""

from __future__ import annotations

import datetime as dt
import unicodedata
from collections.abc import Iterable
from typing import Any

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.db.tables import UserToken
from kbcore.errors import InvalidRequest
from kbcore.permissions.roles import Role
from kbcore.words.said import said
from services.chat.accounts.grants import APPLICATION, DATASET, MAX_OBJECT_ID, GrantSpec, UserView
from services.chat.accounts.personal_tokens import is_active

ROLES: dict[int, Role] = {pb.ROLE_ADMIN: Role.ADMIN, pb.ROLE_EDITOR: Role.EDITOR, pb.ROLE_VIEWER: Role.VIEWER}
WIRE_ROLES: dict[Role, Any] = {role: wire for wire, role in ROLES.items()}
GRANT_KINDS: dict[int, str] = {pb.GRANT_KIND_DATASET: DATASET, pb.GRANT_KIND_APPLICATION: APPLICATION}
WIRE_GRANT_KINDS: dict[str, Any] = {kind: wire for wire, kind in GRANT_KINDS.items()}


def timestamp(value: dt.datetime | None) -> str:
    """A stored (naive UTC) time as RFC 3339, as every chat message writes times; "" for none."""
    return value.isoformat() + "Z" if value is not None else ""


def role_of(wire: int) -> Role:
    role = ROLES.get(wire)
    if role is None:
        raise InvalidRequest(said("role_must_be_role_admin_role", wire=wire))
    return role


def grants_of(wire: Iterable[pb.Grant]) -> tuple[GrantSpec, ...]:
    """The grants a request names, checked, without repeats."""
    grants: dict[GrantSpec, None] = {}
    for grant in wire:
        kind = GRANT_KINDS.get(grant.kind)
        if kind is None:
            raise InvalidRequest(said("each_grant_must_name_kind_grant"))
        object_id = grant.object_id.strip()
        if not object_id:
            raise InvalidRequest(said("each_grant_must_name_id", kind=kind))
        if len(object_id) > MAX_OBJECT_ID or any(unicodedata.category(ch) == "Cc" for ch in object_id):
            raise InvalidRequest(said("grant_id_must_be_most_printable", kind=kind, max_object_id=MAX_OBJECT_ID))
        grants[GrantSpec(kind, object_id)] = None
    return tuple(grants)


def user_info(view: UserView) -> pb.UserInfo:
    account = view.account
    return pb.UserInfo(
        id=account.id,
        username=account.username,
        role=WIRE_ROLES[Role(account.role)],
        grants=[pb.Grant(kind=WIRE_GRANT_KINDS[g.kind], object_id=g.object_id) for g in view.grants],
        is_active=account.is_active,
        created_at=timestamp(account.created_at),
        last_sign_in_at=timestamp(account.last_sign_in_at),
        has_password=bool(account.password_hash),
    )


def token_info(row: UserToken) -> pb.PersonalTokenInfo:
    """A personal token as a list shows it: its prefix, never the token or its hash."""
    return pb.PersonalTokenInfo(
        id=row.id,
        name=row.name,
        prefix=row.prefix,
        created_at=timestamp(row.created_at),
        expires_at=timestamp(row.expires_at),
        last_used_at=timestamp(row.last_used_at),
        is_active=is_active(row),
    )
