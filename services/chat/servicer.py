"""ChatService: validates and authorises each request, then runs it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2
from kbcore.db.lease import LeaseStore
from kbcore.db.tables import Application, RecordSource
from kbcore.embedding_rule import mixed_models, of_dataset
from kbcore.errors import InvalidRequest, NotFound, PermissionDenied, TooLong
from kbcore.limits import MAX_QUESTION_TOKENS
from kbcore.paging import checked_page
from kbcore.rpc.error_mapping import Context, stream_errors, unary_errors
from kbcore.telemetry.log_context import begin_question
from kbcore.text.tokens import fits_tokens
from kbcore.vocabulary import RECORD_SOURCE
from services.chat.access.credential_admin import counted_use
from services.chat.access.credential_rpcs import CredentialRpcs
from services.chat.access.credentials import (
    DEFAULT_ACCESS_NUM,
    DEFAULT_DAILY_CAP,
    MAX_ACCESS_NUM,
    MAX_DAILY_CAP,
    Credentials,
)
from services.chat.access.identity import CallerKind, current_caller
from services.chat.access.rules import hiding_absence, require_application_access, require_chat_access, require_operator
from services.chat.admin.conversation_log import record_origin
from services.chat.admin.feedback_rpcs import FeedbackRpcs
from services.chat.admin.knowledge_rpcs import KnowledgeRpcs
from services.chat.admin.log_rpcs import LogRpcs
from services.chat.admin.model_admin import ModelAdmin
from services.chat.admin.model_rpcs import ModelRpcs
from services.chat.answering.ask import AskFlow, Question, Upstreams
from services.chat.answering.record_ids import record_id as _record_id
from services.chat.answering.running import RunningQuestions
from services.chat.chat_messages import (
    application_fields,
    application_message,
    public_application,
    record_message,
    with_system_addendum,
)
from services.chat.store import ChatStore

CALLER_KINDS = {
    CallerKind.OPERATOR: pb.WhoAmIResponse.KIND_OPERATOR,
    CallerKind.APPLICATION: pb.WhoAmIResponse.KIND_APPLICATION,
    CallerKind.VISITOR: pb.WhoAmIResponse.KIND_VISITOR,
}
MAX_EXPORT_RECORDS = 100_000


MAX_CLIENT_MESSAGES = 1000
# A live holder polls for a stop every quarter second (stop_listener.STOP_POLL_SECONDS) and acknowledges it by renewing its lease.
STOP_CONFIRM_SECONDS = 3.0
STOP_CONFIRM_POLL = 0.1


def client_history(request: pb.AskRequest) -> list[common_pb2.Message] | None:
    """The client's own dialogue, checked; None when the chat's stored history applies."""
    if not request.HasField("client_history"):
        return None
    messages = list(request.client_history.messages)
    if len(messages) > MAX_CLIENT_MESSAGES:
        raise InvalidRequest(f"at most {MAX_CLIENT_MESSAGES} history messages, got {len(messages)}")
    if any(m.role not in (common_pb2.ROLE_USER, common_pb2.ROLE_ASSISTANT) for m in messages):
        raise InvalidRequest("history messages must come from the user or the assistant")
    return messages


class ChatServicer(
    CredentialRpcs,
    LogRpcs,
    FeedbackRpcs,
    KnowledgeRpcs,
    ModelRpcs,
    pb_grpc.AnswerServiceServicer,
    pb_grpc.ApplicationServiceServicer,
    pb_grpc.AccessServiceServicer,
    pb_grpc.OperationsServiceServicer,
    pb_grpc.ModelServiceServicer,
):
    def __init__(
        self,
        store: ChatStore,
        flow: AskFlow,
        upstreams: Upstreams,
        running: RunningQuestions,
        rpc_timeout: float,
        credentials: Credentials,
        leases: LeaseStore,
        model_admin: ModelAdmin,
    ):
        self._model_admin = model_admin
        self._credentials = credentials
        self._leases = leases
        self._store = store
        self._flow = flow
        self._up = upstreams
        self._running = running
        self._rpc_timeout = rpc_timeout

    async def _chat(self, chat_id: str, application_id: str = "") -> Any:
        if not chat_id:
            raise InvalidRequest("chat_id must not be empty")
        caller = current_caller()
        with hiding_absence(caller):
            chat = await self._store.get_chat(chat_id)
            if application_id and chat.application_id != application_id:
                raise NotFound(f"chat {chat_id} does not exist in application {application_id}")
            require_chat_access(caller, chat)
        return chat

    async def _application(self, application_id: str) -> Application:
        return await self._store.get_application(application_id)

    @stream_errors
    async def Ask(self, request: pb.AskRequest, context: Context) -> AsyncIterator[pb.AskResponse]:
        begin_question(context.invocation_metadata() or ())  # its trace id, for the record and the log
        question = request.message.strip()
        if not question:
            raise InvalidRequest("message must not be empty")
        if not fits_tokens(question, MAX_QUESTION_TOKENS):
            raise TooLong(f"the question is longer than {MAX_QUESTION_TOKENS} estimated tokens")
        if not request.chat_id:
            raise InvalidRequest("chat_id must not be empty")
        caller = current_caller()
        with hiding_absence(caller):
            chat, application = await self._store.get_chat_and_application(request.chat_id)
            require_chat_access(caller, chat)

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
        )
        application = with_system_addendum(application, request.system_addendum)
        async with contextlib.aclosing(self._flow.run(application, chat.id, asked, admit)) as events:
            async for event in events:
                yield event

    @unary_errors
    async def Stop(self, request: pb.StopRequest, context: Context) -> pb.StopResponse:
        chat = await self._chat(request.chat_id)
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
        chat = await self._chat(request.chat_id, request.application_id)
        with hiding_absence(current_caller()):
            record = await self._store.get_record(chat.id, _record_id(request.record_id))
        shown = record_message(record)
        await self._with_own_votes([shown])
        return pb.GetRecordResponse(record=shown)

    @unary_errors
    async def ListRecords(self, request: pb.ListRecordsRequest, context: Context) -> pb.ListRecordsResponse:
        chat = await self._chat(request.chat_id, request.application_id)
        page, size = checked_page(request.page or 1, request.page_size or 20)
        records, total = await self._store.list_records(chat.id, page, size)
        shown = [record_message(r) for r in records]
        await self._with_own_votes(shown)
        return pb.ListRecordsResponse(records=shown, total=total)

    async def _check_datasets(self, dataset_ids: list[str]) -> None:
        if not dataset_ids:
            return
        listed = await self._up.retrieval.datasets.ListDatasets(
            retrieval_service_pb2.ListDatasetsRequest(), timeout=self._rpc_timeout
        )
        known = {d.id: d for d in listed.datasets}
        unknown = [d for d in dataset_ids if d not in known]
        if unknown:
            raise NotFound(f"unknown dataset(s): {', '.join(unknown)}")
        refusal = mixed_models([of_dataset(known[d]) for d in dataset_ids])  # one embedding model per application
        if refusal:
            raise InvalidRequest(refusal)

    @unary_errors
    async def CreateApplication(
        self, request: pb.CreateApplicationRequest, context: Context
    ) -> pb.CreateApplicationResponse:
        require_operator(current_caller())
        fields = application_fields(request.application)
        await self._check_datasets(fields["dataset_ids"])
        await self._model_admin.check_choice(fields["model_setting"])
        row = Application(**fields, **({"id": request.application.id} if request.application.id else {}))
        saved = await self._store.save_application(row)
        return pb.CreateApplicationResponse(application=application_message(saved))

    @unary_errors
    async def GetApplication(self, request: pb.GetApplicationRequest, context: Context) -> pb.GetApplicationResponse:
        caller = current_caller()
        with hiding_absence(caller):
            require_application_access(caller, request.application_id)
            application = application_message(await self._application(request.application_id))
        # A visitor gets what a chat page shows; prompts and search settings are the operator's.
        if caller.kind is CallerKind.VISITOR:
            application = public_application(application)
        return pb.GetApplicationResponse(application=application)

    @unary_errors
    async def UpdateApplication(
        self, request: pb.UpdateApplicationRequest, context: Context
    ) -> pb.UpdateApplicationResponse:
        require_operator(current_caller())
        row = await self._application(request.application.id)
        fields = application_fields(request.application)
        await self._check_datasets(fields["dataset_ids"])
        await self._model_admin.check_choice(fields["model_setting"])
        for key, value in fields.items():
            setattr(row, key, value)
        saved = await self._store.save_application(row)
        return pb.UpdateApplicationResponse(application=application_message(saved))

    @unary_errors
    async def ListApplications(
        self, request: pb.ListApplicationsRequest, context: Context
    ) -> pb.ListApplicationsResponse:
        require_operator(current_caller())
        return pb.ListApplicationsResponse(
            applications=[application_message(a) for a in await self._store.list_applications()]
        )

    @unary_errors
    async def OpenChat(self, request: pb.OpenChatRequest, context: Context) -> pb.OpenChatResponse:
        caller = current_caller()
        visitor = caller.visitor_id if caller.kind is CallerKind.VISITOR else None
        with hiding_absence(caller):
            require_application_access(caller, request.application_id)
            chat = await self._store.open_chat(request.application_id, visitor)
        return pb.OpenChatResponse(chat_id=chat.id)

    @unary_errors
    async def CreateApiKey(self, request: pb.CreateApiKeyRequest, context: Context) -> pb.CreateApiKeyResponse:
        require_operator(current_caller())
        application = await self._application(request.application_id)
        key_id, key = await self._credentials.create_api_key(application.id)
        return pb.CreateApiKeyResponse(id=key_id, key=key)

    @unary_errors
    async def CreateAccessToken(
        self, request: pb.CreateAccessTokenRequest, context: Context
    ) -> pb.CreateAccessTokenResponse:
        require_operator(current_caller())
        access_num = request.access_num or DEFAULT_ACCESS_NUM
        if not 1 <= access_num <= MAX_ACCESS_NUM:
            raise InvalidRequest(f"access_num must be between 1 and {MAX_ACCESS_NUM}, got {access_num}")
        daily_cap = request.daily_cap or DEFAULT_DAILY_CAP
        if not 1 <= daily_cap <= MAX_DAILY_CAP:
            raise InvalidRequest(f"daily_cap must be between 1 and {MAX_DAILY_CAP}, got {daily_cap}")
        application = await self._application(request.application_id)
        link = await self._credentials.set_access_token(application.id, access_num, daily_cap)
        return pb.CreateAccessTokenResponse(
            application_id=application.id,
            access_token=link.access_token,
            access_num=link.access_num,
            daily_cap=link.daily_cap,
        )

    @unary_errors
    async def AuthenticateVisitor(
        self, request: pb.AuthenticateVisitorRequest, context: Context
    ) -> pb.AuthenticateVisitorResponse:
        if not request.access_token.strip():
            raise InvalidRequest("access_token must not be empty")
        visitor, token = await self._credentials.new_visitor(request.access_token.strip())
        return pb.AuthenticateVisitorResponse(token=token, application_id=visitor.application_id, visitor_id=visitor.id)

    @unary_errors
    async def ExportRecords(self, request: pb.ExportRecordsRequest, context: Context) -> pb.ExportRecordsResponse:
        caller = current_caller()
        if caller.kind is CallerKind.VISITOR:
            raise PermissionDenied("a visitor cannot export an application's log")
        with hiding_absence(caller):
            require_application_access(caller, request.application_id)
            application = await self._application(request.application_id)
        records = await self._store.export_records(application.id, MAX_EXPORT_RECORDS)
        return pb.ExportRecordsResponse(records=[record_message(r) for r in records])

    @unary_errors
    async def WhoAmI(self, request: pb.WhoAmIRequest, context: Context) -> pb.WhoAmIResponse:
        caller = current_caller()
        return pb.WhoAmIResponse(kind=CALLER_KINDS[caller.kind], application_id=caller.application_id)
