"""The conversation log's RPCs, ListLog and ExportLog (a part of ``ChatServicer``, kept apart so
each module has one job). Both are the operator's: the log holds every caller's questions."""

from __future__ import annotations

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.errors import PermissionDenied
from kbcore.paging import checked_page
from kbcore.rpc.error_mapping import Context, unary_errors
from services.chat.access.identity import CallerKind, current_caller
from services.chat.admin.conversation_log import ChatLog, LogQuery, log_query
from services.chat.store import ChatStore


class LogRpcs:
    _store: ChatStore

    async def _log_query(self, message: pb.LogFilter) -> LogQuery:
        if current_caller().kind is not CallerKind.OPERATOR:
            raise PermissionDenied("only the operator may read the conversation log")
        query = log_query(message)
        if query.application_id:
            await self._store.get_application(query.application_id)  # NotFound names the id
        return query

    @unary_errors
    async def ListLog(self, request: pb.ListLogRequest, context: Context) -> pb.ListLogResponse:
        query = await self._log_query(request.filter)
        page, page_size = checked_page(request.page, request.page_size)
        return await ChatLog(self._store.sessions).page(query, page, page_size)

    @unary_errors
    async def ExportLog(self, request: pb.ListLogRequest, context: Context) -> pb.ListLogResponse:
        query = await self._log_query(request.filter)
        return await ChatLog(self._store.sessions).export(query)
