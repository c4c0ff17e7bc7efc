"""Who is calling the chat service, as every servicer method reads it (``current_caller()``).

The caller interceptor (``services.chat.access.caller_interceptor``) resolves the call's token
and sets the caller for the call (``calling_as``); the methods, the access rules, the accounts
and the operator's RPCs only read it, so it lives below all of them.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from enum import Enum

from kbcore.errors import Unauthenticated
from kbcore.permissions.roles import Kind, Principal
from kbcore.rpc.handlers import holding
from kbcore.words.said import said


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


_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")


def current_caller() -> Caller:
    """The caller of the call being served (set by ``CallerInterceptor``)."""
    try:
        return _CALLER.get()
    except LookupError as exc:
        raise Unauthenticated(said("caller_not_identified")) from exc


def calling_as(caller: Caller) -> contextlib.AbstractContextManager[None]:
    """``caller`` as ``current_caller()`` inside: what the interceptor runs a call's method in."""
    return holding(_CALLER, caller)
