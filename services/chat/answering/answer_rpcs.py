"""AnswerService: asking, stopping, and reading a chat's records back."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from grpc_stubs.common.v1 import common_pb2
from kbcore.db.lease import LeaseStore
from kbcore.db.tables import RecordSource
from kbcore.errors import InvalidRequest, PermissionDenied
from kbcore.paging import checked_page
from kbcore.permissions.roles import Need
from kbcore.rpc.error_mapping import Context, stream_errors, unary_errors
from kbcore.telemetry.log_context import begin_question
from kbcore.text.control_chars import LINE_BREAKS_AND_TABS, code_point, first_control
from kbcore.text.tokens import require_question_fits
from kbcore.vocabulary import RECORD_SOURCE, VOTE
from kbcore.words.said import said
from services.chat.access.credential_admin import counted_use
from services.chat.access.credentials import Credentials
from services.chat.access.rules import hiding_absence, require_application_access, require_chat_access, visible_chat
from services.chat.admin.conversation_log import record_origin
from services.chat.admin.votes import VoteBook, voter_of
from services.chat.answering.ask import AskFlow, Question
from services.chat.answering.prompt import with_system_addendum
from services.chat.answering.running import RunningQuestions
from services.chat.callers.chat_caller import CallerKind, current_caller
from services.chat.chat_messages import record_id, record_message
from services.chat.share_page import as_shown, hidden_from
from services.chat.store import ChatStore

MAX_EXPORT_RECORDS = 100_000
MAX_CLIENT_MESSAGES = 1000
# A live holder polls for a stop every quarter second (stop_listener.STOP_POLL_SECONDS) and acknowledges it by renewing its lease.
STOP_CONFIRM_SECONDS = 3.0
STOP_CONFIRM_POLL = 0.1


def checked_question(message: str) -> str:
    """The question as asked (MaxKB's ``chat_message`` and the OpenAI routes both ask through
    here), checked: not blank, no control character but tabs and line breaks (checked before
    stripping, which would take some of them for spaces), within the token limit."""
    found = first_control(message, LINE_BREAKS_AND_TABS)
    if found is not None:
        raise InvalidRequest(said("question_must_not_contain_control_characters", code_point_found=code_point(found)))
    question = message.strip()
    if not question:
        raise InvalidRequest(said("message_must_not_be_empty"))
    require_question_fits(question)
    return question


def client_history(request: pb.AskRequest) -> list[common_pb2.Message] | None:
    """The client's own dialogue, checked; None when the chat's stored history applies."""
    if not request.HasField("client_history"):
        return None
    messages = list(request.client_history.messages)
    if len(messages) > MAX_CLIENT_MESSAGES:
        raise InvalidRequest(
            said("most_history_messages_got", max_client_messages=MAX_CLIENT_MESSAGES, len_messages=len(messages))
        )
    if any(m.role not in (common_pb2.ROLE_USER, common_pb2.ROLE_ASSISTANT) for m in messages):
        raise InvalidRequest(said("history_messages_must_come_user_assistant"))
    return messages


class AnswerRpcs(pb_grpc.AnswerServiceServicer):
    def __init__(
        self,
        store: ChatStore,
        flow: AskFlow,
        running: RunningQuestions,
        leases: LeaseStore,
        credentials: Credentials,
    ):
        """``running`` reaches the questions this process answers; ``leases`` those of others."""
        self._store = store
        self._flow = flow
        self._running = running
        self._leases = leases
        self._credentials = credentials

    @stream_errors
    async def Ask(self, request: pb.AskRequest, context: Context) -> AsyncIterator[pb.AskResponse]:
        begin_question(context.invocation_metadata() or ())  # its trace id, for the record and the log
        question = checked_question(request.message)
        if not request.chat_id:
            raise InvalidRequest(said("chat_id_must_not_be_empty"))
        caller = current_caller()
        with hiding_absence(caller):
            chat, application = await self._store.get_chat_and_application(request.chat_id)
            require_chat_access(caller, chat, Need.CHAT_ASK)

        async def admit_visitor() -> None:
            """Count a visitor's question once it holds the chat, so a refused (409) one costs nothing."""
            await self._credentials.count_question(caller.visitor_id, application.id)

        admit = admit_visitor if caller.kind is CallerKind.VISITOR else None
        source = RECORD_SOURCE.name(request.source) or RecordSource.CHAT
        asked = Question(
            question,
            request.re_chat,
            client_history(request),
            source,
            record_origin(caller, source),
            counted_use(caller),
            batch_deltas=request.batch_deltas,
            hide_sources=hidden_from(caller.kind is CallerKind.VISITOR, application.page_setting or {}).sources,
        )
        application = with_system_addendum(application, request.system_addendum)
        async with contextlib.aclosing(self._flow.run(application, chat.id, asked, admit)) as events:
            async for event in events:
                yield event

    @unary_errors
    async def Stop(self, request: pb.StopRequest, context: Context) -> pb.StopResponse:
        chat = await visible_chat(self._store, request.chat_id, need=Need.CHAT_ASK)
        # Here when the answer runs in this process, else through the lease row to its holder.
        stopped = self._running.stop(chat.id) or await self._stop_elsewhere(chat.id)
        return pb.StopResponse(stopped=stopped)

    async def _stop_elsewhere(self, chat_id: str) -> bool:
        """Ask the lease's holder to stop and say whether it will: a live holder acknowledges
        within its poll interval (it renews the lease, or has already let the chat go); one that
        died (its lease not yet expired) cannot, and the answer is then "not stopped", not a
        hopeful yes."""
        asked_at = await self._leases.expiry(chat_id)
        if asked_at is None or not await self._leases.request_stop(chat_id):
            return False
        deadline = time.monotonic() + STOP_CONFIRM_SECONDS
        while True:
            expiry = await self._leases.expiry(chat_id)
            if expiry is None or expiry > asked_at:
                return True
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(STOP_CONFIRM_POLL)

    @unary_errors
    async def GetRecord(self, request: pb.GetRecordRequest, context: Context) -> pb.GetRecordResponse:
        chat = await visible_chat(self._store, request.chat_id, request.application_id)
        with hiding_absence(current_caller()):
            record = await self._store.get_record(chat.id, record_id(request.record_id))
        [shown] = await self._as_reader_sees(chat.application_id, [record_message(record)])
        await self._with_own_votes([shown])
        return pb.GetRecordResponse(record=shown)

    @unary_errors
    async def ListRecords(self, request: pb.ListRecordsRequest, context: Context) -> pb.ListRecordsResponse:
        chat = await visible_chat(self._store, request.chat_id, request.application_id)
        page, size = checked_page(request.page or 1, request.page_size or 20)
        records, total = await self._store.list_records(chat.id, page, size, newest_first=request.newest_first)
        shown = await self._as_reader_sees(chat.application_id, [record_message(r) for r in records])
        await self._with_own_votes(shown)
        return pb.ListRecordsResponse(records=shown, total=total)

    async def _as_reader_sees(self, application_id: str, records: list[pb.ChatRecord]) -> list[pb.ChatRecord]:
        """The records without what the application hides from a visitor reading them."""
        if current_caller().kind is not CallerKind.VISITOR or not records:
            return records
        hidden = hidden_from(True, (await self._store.get_application(application_id)).page_setting or {})
        return [as_shown(r, hidden) for r in records]

    async def _with_own_votes(self, records: Sequence[pb.ChatRecord]) -> None:
        """Each record as its reader sees it: with the reader's own vote, for the chat page."""
        votes = await VoteBook(self._store.sessions).own(voter_of(current_caller()), [int(r.id) for r in records])
        for record in records:
            mine = votes.get(int(record.id))
            if mine is not None:
                record.vote = VOTE.value(mine.vote, default=pb.VOTE_UNSPECIFIED)
                record.vote_reason = mine.reason

    @unary_errors
    async def ExportRecords(self, request: pb.ExportRecordsRequest, context: Context) -> pb.ExportRecordsResponse:
        caller = current_caller()
        if caller.kind is CallerKind.VISITOR:
            raise PermissionDenied(said("visitor_cannot_export_application_log"))
        with hiding_absence(caller):
            require_application_access(caller, request.application_id, Need.LOG_READ)
            application = await self._store.get_application(request.application_id)
        records = await self._store.export_records(application.id, MAX_EXPORT_RECORDS)
        return pb.ExportRecordsResponse(records=[record_message(r) for r in records])
