"""Who is calling, resolved once per call from the call's metadata by a server interceptor.

The operator token, a user's session or personal token (``kbs_…``, ``kbp_…``), an application
API key or a visitor token arrive as ``authorization: Bearer …``; the interceptor resolves them
before the servicer method runs and refuses the call (UNAUTHENTICATED) when they are missing or
unknown, then checks the call against the permission table (``kbcore.permissions.table``) with
the check the server gives it (``services.chat.access.rules.check_call``). Methods read the
result with ``current_caller()``; its ``principal`` is what the permission rule reads. Only
the public methods (visitor and user sign-in) run without credentials.
"""

from __future__ import annotations

import contextlib
import contextvars
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import grpc

from kbcore.db.audit import acting, actor_of
from kbcore.errors import Unauthenticated
from kbcore.permissions.roles import ANONYMOUS, Kind, Principal
from kbcore.permissions.wire import address_in
from kbcore.rpc.caller_token import token_in
from kbcore.rpc.error_mapping import abort_for
from kbcore.rpc.handlers import holding, scoped
from services.chat.access.credentials import Credentials
from services.chat.accounts.grants import principal_of
from services.chat.accounts.user_tokens import UNKNOWN_TOKEN, UserTokens, is_user_token


class CallerKind(Enum):
    OPERATOR = "operator"  # the break-glass token: may do everything
    APPLICATION = "application"  # an application API key: that application's chats
    VISITOR = "visitor"  # a share-link visitor: only its own chats
    USER = "user"  # a signed-in person: what their role and grants allow


_PRINCIPAL_KINDS = {
    CallerKind.OPERATOR: Kind.OPERATOR,
    CallerKind.APPLICATION: Kind.APPLICATION,
    CallerKind.VISITOR: Kind.VISITOR,
}


@dataclass(frozen=True)
class Caller:
    kind: CallerKind
    application_id: str = ""
    visitor_id: str = ""
    key_id: str = ""  # an application caller's API key
    user: Principal | None = None  # a user caller: role, grants (``kbcore.permissions``)
    token_id: str = ""  # a user caller's token (``user_token.id``): sign-out ends it
    token_kind: str = ""  # a user caller's: "session" or "personal"

    @property
    def principal(self) -> Principal:
        """Who the caller is as the permission rule (``kbcore.permissions.roles``) reads it."""
        if self.user is not None:
            return self.user
        return Principal(_PRINCIPAL_KINDS[self.kind], application_id=self.application_id)

    @property
    def user_id(self) -> str:
        return self.user.user_id if self.user is not None else ""


# What the interceptor runs once the caller is known: raises the refusal when the call is not
# the caller's to make (the server passes ``services.chat.access.rules.check_call``).
CallCheck = Callable[[Caller, str, Any], None]


_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")


def current_caller() -> Caller:
    """The caller of the call being served (set by ``CallerInterceptor``)."""
    try:
        return _CALLER.get()
    except LookupError as exc:
        raise Unauthenticated("the caller is not identified") from exc


class CallerResolver:
    """Turns a bearer token into a caller: the operator token, a user's session or personal
    token, else a stored key or visitor."""

    def __init__(self, operator_token: str, credentials: Credentials, users: UserTokens) -> None:
        self._operator_token = operator_token.encode()
        self._credentials = credentials
        self._users = users

    async def resolve(self, token: str) -> Caller:
        if not token:
            raise Unauthenticated("missing credentials: send 'authorization: Bearer <token>' metadata")
        if hmac.compare_digest(token.encode(), self._operator_token):
            return Caller(CallerKind.OPERATOR)
        if is_user_token(token):
            holder = await self._users.resolve(token)
            principal = principal_of(holder.account, holder.grants)
            return Caller(CallerKind.USER, user=principal, token_id=holder.token_id, token_kind=holder.token_kind)
        identity = await self._credentials.identify(token)
        if identity is None:
            raise Unauthenticated(UNKNOWN_TOKEN)
        kind = CallerKind.VISITOR if identity.kind == "visitor" else CallerKind.APPLICATION
        return Caller(kind, identity.application_id, identity.visitor_id, identity.key_id)


class CallerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Resolves the caller of every call to the chat service's proto services except the public
    methods, once, before the method, and checks that the call is the caller's to make; the
    method then acts as that caller in the audit trail (the public ones as an anonymous caller)."""

    def __init__(
        self,
        services: tuple[str, ...],
        resolver: CallerResolver,
        public_methods: frozenset[str],
        check: CallCheck,
    ) -> None:
        self._prefixes = tuple(f"/{service}/" for service in services)
        self._resolver = resolver
        self._public = frozenset(prefix + m for prefix in self._prefixes for m in public_methods)
        self._check = check

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or not method.startswith(self._prefixes):
            return handler
        address = address_in(details.invocation_metadata)
        if method in self._public:
            anonymous = actor_of(ANONYMOUS, address)

            async def as_anonymous(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> contextlib.AbstractContextManager[None]:
                return acting(anonymous)

            return scoped(handler, as_anonymous)
        token = token_in(details.invocation_metadata)

        async def identified(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> contextlib.ExitStack:
            caller = await self._identify(token, method, request, context)
            scope = contextlib.ExitStack()
            scope.enter_context(holding(_CALLER, caller))
            scope.enter_context(acting(actor_of(caller.principal, address)))
            return scope

        return scoped(handler, identified)

    async def _identify(
        self, token: str, method: str, request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> Caller:
        """Resolve the caller and check the call (refused calls end here, with their status)."""
        try:
            caller = await self._resolver.resolve(token)
            self._check(caller, method, request)
        except Exception as exc:
            await abort_for(context, "identifying the caller", exc)
            raise AssertionError("unreachable: abort raises") from exc
        return caller
