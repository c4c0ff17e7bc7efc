"""The principals who call and what each may do: the one rule every surface checks.

A *need* is what a route or RPC requires (read a dataset, change an application, administer
users …). A *principal* is who the call's credentials name. ``allows`` says whether a principal
meets a need for an object (a dataset or application id; "" when the call names none, as a list
or a chat-only route does: the service then filters the list or checks the chat's application).

Roles, as docs/access.md describes them: an administrator (and the break-glass operator token)
may do everything; an editor reads and changes the datasets and applications granted to them,
and creates new ones (granted to them on creation); a viewer reads what is granted to them and
changes nothing. Application keys and visitors only chat: the chat service checks that the chat
is theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Need(Enum):
    PUBLIC = "public"  # anyone, no credentials (sign-in, a share link's authentication)
    ANY_CALLER = "any_caller"  # any credential; the service decides what it shows
    SIGNED_IN = "signed_in"  # a person's own account: sign-out, password, personal tokens
    CHAT_ASK = "chat_ask"  # ask, stop, vote: a visitor or key on its own chats, an editor of the application
    CHAT_READ = "chat_read"  # read records: as CHAT_ASK, and viewers of the application
    LOG_READ = "log_read"  # an application's records exported: its own key, and readers of the application
    APPLICATION_READ = "application_read"
    APPLICATION_WRITE = "application_write"
    APPLICATION_CREATE = "application_create"
    DATASET_READ = "dataset_read"  # documents, paragraphs, search
    DATASET_WRITE = "dataset_write"
    DATASET_CREATE = "dataset_create"
    MODEL_READ = "model_read"  # the registered model endpoints (to choose one for an application)
    ADMIN = "admin"  # users, model endpoints, the audit trail, metrics


class Kind(Enum):
    ANONYMOUS = "anonymous"
    VISITOR = "visitor"
    APPLICATION = "application"  # an application API key
    USER = "user"
    OPERATOR = "operator"  # the break-glass token (KB_ADMIN_TOKEN or data/operator.token)


class Role(Enum):
    ADMIN = "admin"
    EDITOR = "editor"
    VIEWER = "viewer"


@dataclass(frozen=True)
class Principal:
    """Who a call's credentials name, with what the permission rule needs to know about them."""

    kind: Kind
    role: Role | None = None  # for users
    user_id: str = ""
    username: str = ""
    application_id: str = ""  # an application key's or a visitor's application
    datasets: frozenset[str] = field(default_factory=frozenset)  # granted, for editors and viewers
    applications: frozenset[str] = field(default_factory=frozenset)

    @property
    def is_administrator(self) -> bool:
        return self.kind is Kind.OPERATOR or self.role is Role.ADMIN


ANONYMOUS = Principal(Kind.ANONYMOUS)
OPERATOR = Principal(Kind.OPERATOR)

# Needs a chat-side credential meets on its own application (the chat service then checks
# the chat is the caller's).
_CHAT_SIDE = {
    Kind.VISITOR: frozenset({Need.ANY_CALLER, Need.CHAT_ASK, Need.CHAT_READ}),
    Kind.APPLICATION: frozenset({Need.ANY_CALLER, Need.CHAT_ASK, Need.CHAT_READ, Need.LOG_READ}),
}
_DATASET = {Need.DATASET_READ: "read", Need.DATASET_WRITE: "write"}
_APPLICATION = {
    Need.APPLICATION_READ: "read",
    Need.LOG_READ: "read",
    Need.CHAT_READ: "read",
    Need.APPLICATION_WRITE: "write",
    Need.CHAT_ASK: "write",
}
_ANY_USER = frozenset({Need.ANY_CALLER, Need.SIGNED_IN, Need.MODEL_READ})


def allows(principal: Principal, need: Need, object_id: str = "") -> bool:
    """Whether ``principal`` meets ``need`` on ``object_id`` ("" = no particular object)."""
    if need is Need.PUBLIC or principal.is_administrator:
        return True
    if principal.kind in _CHAT_SIDE:
        return need in _CHAT_SIDE[principal.kind] and object_id in ("", principal.application_id)
    if principal.kind is not Kind.USER:
        return False
    return _user_allows(principal, need, object_id)


def _user_allows(principal: Principal, need: Need, object_id: str) -> bool:
    if need in _ANY_USER:
        return True
    editor = principal.role is Role.EDITOR
    if need in (Need.DATASET_CREATE, Need.APPLICATION_CREATE):
        return editor
    level = _DATASET.get(need) or _APPLICATION.get(need)
    if level is None:
        return False  # ADMIN
    if level == "write" and not editor:
        return False
    granted = principal.datasets if need in _DATASET else principal.applications
    return not object_id or object_id in granted


def sees_everything(principal: Principal) -> bool:
    """Whether lists are shown whole (else filtered to the principal's grants)."""
    return principal.is_administrator or principal.kind not in (Kind.USER,)
