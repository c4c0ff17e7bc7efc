"""Who may touch which chat: the operator everything, an application key its application's
chats, a share-link visitor only the chats it opened. Others see "not found", not "forbidden",
so chat ids cannot be probed."""

from __future__ import annotations

import grpc

from kb.chat.v1 import chat_service_pb2 as pb
from kbcore.db.models import Chat
from kbcore.rpc import RpcError, not_found


def require_application_access(caller: pb.Caller, application_id: str) -> None:
    if caller.kind == pb.Caller.KIND_OPERATOR:
        return
    if caller.kind in (pb.Caller.KIND_APPLICATION, pb.Caller.KIND_VISITOR) and caller.application_id == application_id:
        return
    if caller.kind == pb.Caller.KIND_UNSPECIFIED:
        raise RpcError(grpc.StatusCode.UNAUTHENTICATED, "the caller is not identified")
    raise not_found(f"application {application_id} does not exist")


def require_chat_access(caller: pb.Caller, chat: Chat) -> None:
    require_application_access(caller, chat.application_id)
    if caller.kind == pb.Caller.KIND_VISITOR and chat.visitor_id != caller.visitor_id:
        raise not_found(f"chat {chat.id} does not exist")


def require_operator(caller: pb.Caller) -> None:
    if caller.kind != pb.Caller.KIND_OPERATOR:
        raise RpcError(grpc.StatusCode.PERMISSION_DENIED, "only the operator may manage applications")
