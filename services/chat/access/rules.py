"""Who may touch what, in the chat service: every call is checked against the permission table
(``kbcore.permissions.table``) once its caller is known (``check_call``), and the methods
check what the table cannot see from the request alone: the application of a chat named only
by its id, a visitor's own chats, the applications a list may show.

An application key reaches its application's chats, a share-link visitor only the chats it
opened. They see "not found", not "forbidden", for anything else, so ids cannot be probed.
Users (docs/access.md) are refused in words that say what their account lacks
(``kbcore.permissions.check.refusal_text``) where the request itself names what they lack (an
application in the path); a chat named by its id alone that lies in an application they may not
even read is "not found" to them too, in the same words as an id that does not exist, or the
refusal would tell an outsider which chat ids exist. The break-glass operator and
administrators may do everything, and are told plainly what does not exist.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from kbcore.db.tables import Chat
from kbcore.errors import InvalidRequest, NotFound, PermissionDenied
from kbcore.permissions.check import first_refused, objects_named, refusal_text
from kbcore.permissions.roles import Kind, Need, Principal, allows, sees_everything
from kbcore.permissions.table import Requirement, requirements_for_rpc
from kbcore.words.said import said
from services.chat.callers.chat_caller import Caller, CallerKind, current_caller
from services.chat.store import ChatStore

# One text for every application, chat or record a caller may not see, whether it is missing
# or someone else's: a message that differs ("chat … does not exist" vs "application <id> does
# not exist") tells a prober that the id exists and who owns it.
NOT_VISIBLE = said("not_found_no_such_application_chat")
# Said to an application key or a visitor asking for what only people who run the deployment do.
CHAT_ONLY = said("application_api_key_share_link_visitor")
UNLISTED = said("call_not_permission_table_so_nobody")
_CHAT_SIDE = (Kind.VISITOR, Kind.APPLICATION)


def not_visible() -> NotFound:
    return NotFound(NOT_VISIBLE)


def refusal(principal: Principal, requirement: Requirement) -> Exception:
    """What a caller who does not meet ``requirement`` is told: a key or visitor asking for a
    chat-side need on another application "not found"; a user why not; others that they cannot."""
    if principal.kind in _CHAT_SIDE and allows(principal, requirement.need):
        return not_visible()
    if principal.kind is Kind.USER:
        return PermissionDenied(refusal_text(principal, requirement))
    return PermissionDenied(CHAT_ONLY)


def check_call(caller: Caller, method: str, request: Any) -> None:
    """Refuse the call unless the permission table lists ``method`` and ``caller`` meets its
    requirements for the objects the request names."""
    requirements = requirements_for_rpc(method)
    if requirements is None:
        raise PermissionDenied(UNLISTED)
    principal = caller.principal
    objects = objects_named(request, requirements)
    refused = first_refused(principal, requirements, objects)
    if refused is not None:
        raise refusal(principal, refused)


def require(caller: Caller, need: Need, object_id: str = "") -> None:
    """Refuse unless ``caller`` meets ``need`` on ``object_id`` ("" = no particular object)."""
    principal = caller.principal
    if not allows(principal, need, object_id):
        raise refusal(principal, Requirement(need))


def is_chat_side(caller: Caller) -> bool:
    """An application key or a share-link visitor: a caller bound to one application."""
    return caller.kind in (CallerKind.APPLICATION, CallerKind.VISITOR)


def shown_applications(caller: Caller) -> frozenset[str] | None:
    """The applications a list may show the caller; None for all of them."""
    principal = caller.principal
    return None if sees_everything(principal) else principal.applications


def require_application_access(caller: Caller, application_id: str, need: Need = Need.CHAT_READ) -> None:
    """A key or visitor reaches only its own application (else ``NOT_VISIBLE``); a user must
    meet ``need`` on it."""
    if is_chat_side(caller):
        if caller.application_id != application_id:
            raise not_visible()
        return
    require(caller, need, application_id)


def require_chat_access(caller: Caller, chat: Chat, need: Need = Need.CHAT_READ) -> None:
    """The caller may do ``need`` in ``chat``; ``NOT_VISIBLE`` when the chat is not theirs to see
    at all (another application's, another visitor's), as for a chat that does not exist; a
    user who sees the chat but may not do ``need`` in it (a viewer asking) is told why."""
    if caller.kind is CallerKind.USER and not allows(caller.principal, Need.CHAT_READ, chat.application_id):
        raise not_visible()
    require_application_access(caller, chat.application_id, need)
    # A chat its visitor deleted is gone for them: not listed, not readable, not continued.
    if caller.kind is CallerKind.VISITOR and (chat.visitor_id != caller.visitor_id or chat.hidden_at is not None):
        raise not_visible()


async def visible_chat(store: ChatStore, chat_id: str, application_id: str = "", need: Need = Need.CHAT_READ) -> Chat:
    """The chat, once the caller is known to be allowed ``need`` on it (and, when
    ``application_id`` is given, known to be one of that application's chats)."""
    if not chat_id:
        raise InvalidRequest(said("chat_id_must_not_be_empty"))
    caller = current_caller()
    with hiding_absence(caller):
        chat = await store.get_chat(chat_id)
        if application_id and chat.application_id != application_id:
            raise NotFound(said("chat_does_not_exist_application", chat_id=chat_id, application_id=application_id))
        require_chat_access(caller, chat, need)
    return chat


@contextlib.contextmanager
def hiding_absence(caller: Caller) -> Iterator[None]:
    """Inside, any "not found" reads as ``NOT_VISIBLE`` to all but those who see everything (the
    operator, administrators), who keep the precise message: anyone else reading "chat … does
    not exist in application …" for one id and "chat … does not exist" for another would learn
    that the first exists."""
    try:
        yield
    except NotFound as exc:
        if caller.principal.is_administrator:
            raise
        raise not_visible() from exc
