"""OperationsService: how the applications are used, for the operator and the users they are
granted to (the conversation log, usage figures, the gap report of what the knowledge base
lacks; improving an answer into a dataset, for those who may change both), anyone's vote on
an answer they can see, and the audit trail, for administrators."""

from __future__ import annotations

import dataclasses

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from kbcore.errors import InvalidRequest, PermissionDenied
from kbcore.paging import checked_page
from kbcore.permissions.roles import Need
from kbcore.rpc.error_mapping import Context, unary_errors
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.vocabulary import VOTE
from kbcore.words.said import said
from services.chat.access.rules import hiding_absence, is_chat_side, require, shown_applications, visible_chat
from services.chat.admin.audit_trail import AuditTrail, audit_page, audit_query
from services.chat.admin.conversation_log import ChatLog, LogQuery, log_query
from services.chat.admin.days import day_range
from services.chat.admin.gaps import MAX_TEXTS, gap_items, grouping_request, insufficient_records, report_groups
from services.chat.admin.improvements import Improver, link_paragraph, on_behalf_of, paragraph_text
from services.chat.admin.usage_report import UsageReport
from services.chat.admin.votes import VoteBook, requested_vote, voter_of
from services.chat.callers.chat_caller import current_caller
from services.chat.chat_messages import record_id
from services.chat.store import ChatStore

# A chart's range: a year (a leap year's every day); a week when the request names none.
MAX_USAGE_DAYS = 366
DEFAULT_USAGE_DAYS = 7
MAX_GAP_DAYS = 366
DEFAULT_GAP_DAYS = 30
DEFAULT_GROUPS = 50
MAX_GROUPS = 200
# Embedding up to 2,000 texts on the in-process model takes about a minute the first time.
GROUPING_TIMEOUT = 180.0
# Said to an API key or a visitor: the log holds every caller's questions (a key exports its
# own application's records with AnswerService.ExportRecords).
LOG_NOT_FOR_CHAT_CREDENTIALS = said("only_operator_signed_users_granted_application")


class OperationsRpcs(pb_grpc.OperationsServiceServicer):
    def __init__(self, store: ChatStore, retrieval: RetrievalStubs, rpc_timeout: float):
        """``retrieval`` groups the gap report's texts and takes an improvement's paragraph."""
        self._store = store
        self._retrieval = retrieval
        self._rpc_timeout = rpc_timeout

    async def _log_query(self, message: pb.LogFilter) -> LogQuery:
        """The log's filter, for the operator and users: the log holds every caller's questions.
        A user reads the log of an application granted to them; without an application, of all
        those granted to them (administrators: of all)."""
        caller = current_caller()
        if is_chat_side(caller):
            raise PermissionDenied(LOG_NOT_FOR_CHAT_CREDENTIALS)
        query = log_query(message)
        if query.application_id:
            require(caller, Need.LOG_READ, query.application_id)
            await self._store.get_application(query.application_id)  # NotFound names the id
            return query
        return dataclasses.replace(query, among=shown_applications(caller))

    @unary_errors
    async def ListLog(self, request: pb.ListLogRequest, context: Context) -> pb.ListLogResponse:
        query = await self._log_query(request.filter)
        page, page_size = checked_page(request.page, request.page_size)
        return await ChatLog(self._store.sessions).page(query, page, page_size)

    @unary_errors
    async def ExportLog(self, request: pb.ListLogRequest, context: Context) -> pb.ListLogResponse:
        query = await self._log_query(request.filter)
        return await ChatLog(self._store.sessions).export(query)

    @unary_errors
    async def VoteRecord(self, request: pb.VoteRecordRequest, context: Context) -> pb.VoteRecordResponse:
        wanted = requested_vote(request.vote, request.reason)
        number = record_id(request.record_id)
        chat = await visible_chat(self._store, request.chat_id, request.application_id, Need.CHAT_ASK)
        caller = current_caller()
        with hiding_absence(caller):
            await VoteBook(self._store.sessions).cast(chat.id, number, voter_of(caller), wanted)
        return pb.VoteRecordResponse(vote=VOTE.value(wanted.vote, default=pb.VOTE_UNSPECIFIED), reason=wanted.reason)

    @unary_errors
    async def ImproveRecord(self, request: pb.ImproveRecordRequest, context: Context) -> pb.ImproveRecordResponse:
        if not request.application_id:
            raise InvalidRequest(said("application_id_must_not_be_empty"))
        if not request.dataset_id.strip():
            raise InvalidRequest(said("dataset_id_must_name_dataset_improvement"))
        caller = current_caller()
        require(caller, Need.APPLICATION_WRITE, request.application_id)
        require(caller, Need.DATASET_WRITE, request.dataset_id.strip())
        number = record_id(request.record_id)
        chat = await visible_chat(self._store, request.chat_id, request.application_id)
        record = await self._store.get_record(chat.id, number)
        title, content = paragraph_text(request.question, request.answer, record.question)
        improver = Improver(self._retrieval, self._rpc_timeout, on_behalf_of(caller.principal))
        document_id, paragraph_id = await improver.write(request.dataset_id.strip(), title, content, record.question)
        await link_paragraph(self._store.sessions, record.id, request.dataset_id.strip(), paragraph_id)
        return pb.ImproveRecordResponse(
            dataset_id=request.dataset_id.strip(), document_id=document_id, paragraph_id=paragraph_id
        )

    @unary_errors
    async def GapReport(self, request: pb.GapReportRequest, context: Context) -> pb.GapReportResponse:
        require(current_caller(), Need.APPLICATION_READ, request.application_id)
        max_groups = request.max_groups or DEFAULT_GROUPS
        if not 1 <= max_groups <= MAX_GROUPS:
            raise InvalidRequest(said("max_groups_must_be_between_1", max_groups=MAX_GROUPS, max_groups2=max_groups))
        days = day_range(request.date_from, request.date_to, MAX_GAP_DAYS, DEFAULT_GAP_DAYS)
        application = await self._store.get_application(request.application_id)
        records = await insufficient_records(self._store.sessions, application.id, days, MAX_TEXTS)
        items, used = gap_items(records)
        if not items:
            return pb.GapReportResponse(groups=[], records=0)
        grouped = await self._retrieval.search.GroupTexts(grouping_request(items), timeout=GROUPING_TIMEOUT)
        return pb.GapReportResponse(groups=report_groups(items, grouped.groups, max_groups), records=used)

    @unary_errors
    async def Usage(self, request: pb.UsageRequest, context: Context) -> pb.UsageResponse:
        require(current_caller(), Need.APPLICATION_READ, request.application_id)
        days = day_range(request.date_from, request.date_to, MAX_USAGE_DAYS, DEFAULT_USAGE_DAYS)
        application = await self._store.get_application(request.application_id)
        return pb.UsageResponse(days=await UsageReport(self._store.sessions).days(application.id, days))

    @unary_errors
    async def ListAudit(self, request: pb.ListAuditRequest, context: Context) -> pb.ListAuditResponse:
        """The audit trail, for administrators (``services.chat.admin.audit_trail``)."""
        require(current_caller(), Need.ADMIN)
        page, page_size = audit_page(request.page, request.page_size)
        return await AuditTrail(self._store.sessions).page(audit_query(request), page, page_size)
