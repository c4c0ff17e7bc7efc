"""Who may touch which chat: the operator everything, an application key its application's
chats, a share-link visitor only the chats it opened. Others see "not found", not "forbidden",
so chat ids cannot be probed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kbcore.db.tables import Chat
from kbcore.errors import InvalidRequest, NotFound, PermissionDenied
from services.chat.access.identity import Caller, CallerKind, current_caller
from services.chat.store import ChatStore

# One text for every application, chat or record a caller may not see, whether it is missing
# or someone else's: a message that differs ("chat … does not exist" vs "application <id> does
# not exist") tells a prober that the id exists and who owns it.
NOT_VISIBLE = "not found: no such application, chat or record for this caller"


def not_visible() -> NotFound:
    return NotFound(NOT_VISIBLE)


def require_application_access(caller: Caller, application_id: str) -> None:
    if caller.kind is CallerKind.OPERATOR or caller.application_id == application_id:
        return
    raise not_visible()


def require_chat_access(caller: Caller, chat: Chat) -> None:
    require_application_access(caller, chat.application_id)
    # A chat its visitor deleted is gone for them: not listed, not readable, not continued.
    if caller.kind is CallerKind.VISITOR and (chat.visitor_id != caller.visitor_id or chat.hidden_at is not None):
        raise not_visible()


async def visible_chat(store: ChatStore, chat_id: str, application_id: str = "") -> Chat:
    """The chat, once the caller is known to be allowed to see it (and, when ``application_id``
    is given, known to be one of that application's chats)."""
    if not chat_id:
        raise InvalidRequest("chat_id must not be empty")
    caller = current_caller()
    with hiding_absence(caller):
        chat = await store.get_chat(chat_id)
        if application_id and chat.application_id != application_id:
            raise NotFound(f"chat {chat_id} does not exist in application {application_id}")
        require_chat_access(caller, chat)
    return chat


@contextlib.contextmanager
def hiding_absence(caller: Caller) -> Iterator[None]:
    """Inside, any "not found" a non-operator meets reads as ``NOT_VISIBLE``; the operator, who
    may see everything, keeps the precise message."""
    try:
        yield
    except NotFound as exc:
        if caller.kind is CallerKind.OPERATOR:
            raise
        raise not_visible() from exc


def require_operator(caller: Caller) -> None:
    if caller.kind is not CallerKind.OPERATOR:
        raise PermissionDenied("only the operator may manage applications")
