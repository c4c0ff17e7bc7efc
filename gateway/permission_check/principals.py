"""Who a token names, as the permission rule reads it: the chat service owns users and their
grants, so the gateway asks it (``AccessService.WhoAmI``, once per request) and turns the answer
into a ``kbcore.permissions.roles.Principal``."""

from __future__ import annotations

from fastapi import Request

from gateway.backends import Backend
from gateway.errors import ApiError
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.permissions.roles import OPERATOR, Kind, Principal, Role
from kbcore.words.said import said

NOBODY = said("these_credentials_name_nobody_sign_again")
ROLES = {pb.ROLE_ADMIN: Role.ADMIN, pb.ROLE_EDITOR: Role.EDITOR, pb.ROLE_VIEWER: Role.VIEWER}
CHAT_SIDE_KINDS = {pb.WhoAmIResponse.KIND_APPLICATION: Kind.APPLICATION, pb.WhoAmIResponse.KIND_VISITOR: Kind.VISITOR}


def granted(user: pb.UserInfo, kind: pb.GrantKind) -> frozenset[str]:
    return frozenset(grant.object_id for grant in user.grants if grant.kind == kind)


def principal_of(who: pb.WhoAmIResponse) -> Principal:
    """The principal a ``WhoAmI`` answer describes (401 for an answer that names no one)."""
    if who.kind == pb.WhoAmIResponse.KIND_OPERATOR:
        return OPERATOR
    if who.kind in CHAT_SIDE_KINDS:
        return Principal(CHAT_SIDE_KINDS[who.kind], application_id=who.application_id)
    if who.kind == pb.WhoAmIResponse.KIND_USER and who.HasField("user"):
        user = who.user
        return Principal(
            Kind.USER,
            role=ROLES.get(user.role),
            user_id=user.id,
            username=user.username,
            datasets=granted(user, pb.GRANT_KIND_DATASET),
            applications=granted(user, pb.GRANT_KIND_APPLICATION),
        )
    raise ApiError(401, NOBODY)


async def resolve(request: Request) -> Principal:
    """The principal of the request's credentials, from the chat service (its 401 for a token it
    did not issue, or one revoked, expired or of a deactivated person, passes through). The
    answer is kept as ``request.state.who`` for the routes that show it."""
    backend = Backend(request.app.state.backends, request)
    who: pb.WhoAmIResponse = await backend.unary(backend.chat.access.WhoAmI, pb.WhoAmIRequest())
    request.state.who = who
    return principal_of(who)


def who_of(request: Request) -> pb.WhoAmIResponse | None:
    """The chat service's answer the permission check resolved the caller with (None: none was
    asked, as for the operator token)."""
    who: pb.WhoAmIResponse | None = getattr(request.state, "who", None)
    return who
