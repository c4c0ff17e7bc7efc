"""The operator's knowledge work: the gap report (what the knowledge base lacks) and improving
an answer into a dataset (a part of ``ChatServicer``, kept apart so each module has one job)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.db.tables import Chat
from kbcore.errors import InvalidRequest
from kbcore.rpc.error_mapping import Context, unary_errors
from services.chat.access.identity import current_caller
from services.chat.access.rules import require_operator
from services.chat.admin.days import day_range
from services.chat.admin.gaps import MAX_TEXTS, gap_items, grouping_request, insufficient_records, report_groups
from services.chat.admin.improvements import Improver, link_paragraph, paragraph_text
from services.chat.answering.ask import Upstreams
from services.chat.answering.record_ids import record_id
from services.chat.store import ChatStore

MAX_GAP_DAYS = 366
DEFAULT_GAP_DAYS = 30
DEFAULT_GROUPS = 50
MAX_GROUPS = 200
# Embedding up to 2,000 texts on the in-process model takes about a minute the first time.
GROUPING_TIMEOUT = 180.0


class KnowledgeRpcs:
    _store: ChatStore
    _up: Upstreams
    _rpc_timeout: float
    # ChatServicer's: the chat, once the caller is known to be allowed to see it.
    _chat: Callable[..., Awaitable[Chat]]

    @unary_errors
    async def GapReport(self, request: pb.GapReportRequest, context: Context) -> pb.GapReportResponse:
        require_operator(current_caller())
        max_groups = request.max_groups or DEFAULT_GROUPS
        if not 1 <= max_groups <= MAX_GROUPS:
            raise InvalidRequest(f"max_groups must be between 1 and {MAX_GROUPS}, got {max_groups}")
        days = day_range(request.date_from, request.date_to, MAX_GAP_DAYS, DEFAULT_GAP_DAYS)
        application = await self._store.get_application(request.application_id)
        records = await insufficient_records(self._store.sessions, application.id, days, MAX_TEXTS)
        items, used = gap_items(records)
        if not items:
            return pb.GapReportResponse(groups=[], records=0)
        grouped = await self._up.retrieval.search.GroupTexts(grouping_request(items), timeout=GROUPING_TIMEOUT)
        return pb.GapReportResponse(groups=report_groups(items, grouped.groups, max_groups), records=used)

    @unary_errors
    async def ImproveRecord(self, request: pb.ImproveRecordRequest, context: Context) -> pb.ImproveRecordResponse:
        require_operator(current_caller())
        if not request.application_id:
            raise InvalidRequest("application_id must not be empty")
        if not request.dataset_id.strip():
            raise InvalidRequest("dataset_id must name the dataset the improvement is written into")
        number = record_id(request.record_id)
        chat = await self._chat(request.chat_id, request.application_id)
        record = await self._store.get_record(chat.id, number)
        title, content = paragraph_text(request.question, request.answer, record.question)
        improver = Improver(self._up.retrieval, self._rpc_timeout)
        document_id, paragraph_id = await improver.write(request.dataset_id.strip(), title, content)
        await link_paragraph(self._store.sessions, record.id, paragraph_id)
        return pb.ImproveRecordResponse(
            dataset_id=request.dataset_id.strip(), document_id=document_id, paragraph_id=paragraph_id
        )
