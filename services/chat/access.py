"""Who may touch which chat: the operator everything, an application key its application's
chats, a share-link visitor only the chats it opened. Others see "not found", not "forbidden",
so chat ids cannot be probed."""

from __future__ import annotations

from kbcore.db.models import Chat
from kbcore.errors import NotFound, PermissionDenied
from services.chat.identity import Caller, CallerKind


def require_application_access(caller: Caller, application_id: str) -> None:
    if caller.kind is CallerKind.OPERATOR or caller.application_id == application_id:
        return
    raise NotFound(f"application {application_id} does not exist")


def require_chat_access(caller: Caller, chat: Chat) -> None:
    require_application_access(caller, chat.application_id)
    if caller.kind is CallerKind.VISITOR and chat.visitor_id != caller.visitor_id:
        raise NotFound(f"chat {chat.id} does not exist")


def require_operator(caller: Caller) -> None:
    if caller.kind is not CallerKind.OPERATOR:
        raise PermissionDenied("only the operator may manage applications")
