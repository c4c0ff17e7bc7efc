"""The check every route passes before its handler runs (an application-wide dependency, so a
route cannot be left out): its entry in ``kbcore.permissions.table.ROUTES`` (a route missing there
is refused to everyone), then who is calling against what the entry needs (docs/access.md,
People and roles).

- Needs anyone meets (``PUBLIC``): no credentials asked.
- No credentials: 401 (unless ``KB_DEV_LOOPBACK_OPERATOR`` makes a loopback caller the operator).
- The break-glass operator token: the operator, recognised here without a call; a token of no
  kind the chat service issues: 401 without a call.
- Needs an application key or a visitor meets on its own application (``CHAT_SIDE``), with a
  token that is not a person's: forwarded without a call; the chat service resolves the token and
  checks the chat is the caller's (an answer's way stays free of extra calls).
- Anything else: the chat service says who the token names (``principals.resolve``, once), and
  ``first_refused`` decides, reading the objects from the path parameters; 403 with
  ``refusal_text``'s sentence.

The principal stays on ``request.state.principal`` (None when it was not resolved) and every call
to the retrieval service carries it (``gateway.backends``).
"""

from __future__ import annotations

from fastapi import Request

from gateway.caller import (
    NO_TOKEN,
    UNKNOWN_TOKEN,
    is_dev_operator,
    is_issued_kind,
    is_operator_token,
    is_user_token,
    presented_token,
)
from gateway.errors import ApiError, is_openai_path
from gateway.openai.wire import as_openai_error
from gateway.permission_check.principals import resolve
from gateway.permission_check.route_keys import route_key
from kbcore.permissions.check import first_refused, refusal_text
from kbcore.permissions.roles import OPERATOR, Need, Principal
from kbcore.permissions.table import ROUTES, Requirement
from kbcore.words.said import said

CHAT_SIDE = frozenset({Need.ANY_CALLER, Need.CHAT_ASK, Need.CHAT_READ, Need.LOG_READ})
UNLISTED = "not_permission_table_kbcore_permissions_table"  # "{value} is not in the permission table …"
UNKNOWN_ROUTE = said("gateway_cannot_tell_which_route_request")
NO_PARAMETER = "permission_table_reads_path_route_has"  # "… reads {value} from the path …"


def current_principal(request: Request) -> Principal | None:
    """Who the permission check found is calling (None: not resolved, as for an application key
    on a chat route)."""
    principal: Principal | None = getattr(request.state, "principal", None)
    return principal


async def permitted(request: Request) -> None:
    """The application-wide dependency: goes on, or raises the refusal (OpenAI-shaped on the
    OpenAI-compatible paths, whose clients read only that)."""
    request.state.principal = None
    try:
        await _check(request)
    except ApiError as refusal:
        if is_openai_path(request.url.path):
            raise as_openai_error(refusal) from refusal
        raise


async def _check(request: Request) -> None:
    key = route_key(request)
    if key is None:
        return
    if not key:
        raise ApiError(403, UNKNOWN_ROUTE)
    requirements = ROUTES.get(key)
    if requirements is None:
        raise ApiError(403, said(UNLISTED, value=key))
    if all(requirement.need is Need.PUBLIC for requirement in requirements):
        return
    principal = await _caller(request, requirements)
    if principal is None:
        return
    request.state.principal = principal
    refused = first_refused(principal, requirements, objects_of(request, requirements))
    if refused is not None:
        raise ApiError(403, refusal_text(principal, refused))


async def _caller(request: Request, requirements: tuple[Requirement, ...]) -> Principal | None:
    """The principal to check, or None when the chat service checks the call itself."""
    token = presented_token(request)
    if token is None:
        if is_dev_operator(request):
            return OPERATOR
        raise ApiError(401, NO_TOKEN)
    if is_operator_token(request, token):
        return OPERATOR
    if not is_issued_kind(token):
        raise ApiError(401, UNKNOWN_TOKEN)
    if not is_user_token(token) and all(requirement.need in CHAT_SIDE for requirement in requirements):
        return None
    return await resolve(request)


def objects_of(request: Request, requirements: tuple[Requirement, ...]) -> dict[str, list[str]]:
    """The ids the requirements are about, from the path. A parameter the table names and the
    route lacks is refused rather than read as "no particular object", which would ask less."""
    objects: dict[str, list[str]] = {}
    for requirement in requirements:
        name = requirement.object_from
        if not name:
            continue
        if name not in request.path_params:
            raise ApiError(403, said(NO_PARAMETER, value=name))
        objects[name] = [str(request.path_params[name])]
    return objects
