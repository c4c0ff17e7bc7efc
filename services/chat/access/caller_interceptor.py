"""Who is calling, resolved once per call from the call's metadata by a server interceptor.

The operator token, a user's session or personal token (``kbs_…``, ``kbp_…``), an application
API key or a visitor token arrive as ``authorization: Bearer …``; the interceptor resolves them
before the servicer method runs and refuses the call (UNAUTHENTICATED) when they are missing or
unknown, then checks the call against the permission table (``kbcore.permissions.table``) with
the check the server gives it (``services.chat.access.rules.check_call``). Methods read the
result with ``current_caller()`` (``services.chat.callers.chat_caller``); its ``principal`` is
what the permission rule reads. Only the public methods (visitor and user sign-in) run without
credentials.
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import Callable
from typing import Any

import grpc

from kbcore.db.audit import acting, actor_of
from kbcore.errors import Unauthenticated
from kbcore.permissions.roles import ANONYMOUS
from kbcore.permissions.wire import address_in
from kbcore.rpc.caller_token import token_in
from kbcore.rpc.error_mapping import abort_for
from kbcore.rpc.handlers import CallMetadata, MethodInterceptor, scoped
from kbcore.words.said import said
from services.chat.access.credentials import Credentials
from services.chat.accounts.grants import principal_of
from services.chat.accounts.user_tokens import UNKNOWN_TOKEN, UserTokens, is_user_token
from services.chat.callers.chat_caller import Caller, CallerKind, calling_as

# What the interceptor runs once the caller is known: raises the refusal when the call is not
# the caller's to make (the server passes ``services.chat.access.rules.check_call``).
CallCheck = Callable[[Caller, str, Any], None]


class CallerResolver:
    """Turns a bearer token into a caller: the operator token, a user's session or personal
    token, else a stored key or visitor."""

    def __init__(self, operator_token: str, credentials: Credentials, users: UserTokens) -> None:
        self._operator_token = operator_token.encode()
        self._credentials = credentials
        self._users = users

    async def resolve(self, token: str) -> Caller:
        if not token:
            raise Unauthenticated(said("missing_credentials_send_authorization_bearer_token"))
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


class CallerInterceptor(MethodInterceptor):
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

    def intercepted(self, handler: grpc.RpcMethodHandler, method: str, metadata: CallMetadata) -> grpc.RpcMethodHandler:
        if not method.startswith(self._prefixes):
            return handler
        address = address_in(metadata)
        if method in self._public:
            anonymous = actor_of(ANONYMOUS, address)

            async def as_anonymous(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> contextlib.AbstractContextManager[None]:
                return acting(anonymous)

            return scoped(handler, as_anonymous)
        token = token_in(metadata)

        async def identified(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> contextlib.ExitStack:
            caller = await self._identify(token, method, request, context)
            scope = contextlib.ExitStack()
            scope.enter_context(calling_as(caller))
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
