"""ApplicationService: applications (created by the operator, administrators and editors;
changed by those who may change them; listed to each user as far as granted), and opening a
chat in one."""

from __future__ import annotations

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from grpc_stubs.retrieval.v1 import retrieval_service_pb2
from kbcore.db.tables import Application
from kbcore.embedding_rule import mixed_models, of_dataset
from kbcore.errors import InvalidRequest, NotFound, PermissionDenied
from kbcore.limits import MAX_PAGE, MAX_PAGE_SIZE
from kbcore.permissions.roles import Need, Role
from kbcore.rpc.error_mapping import Context, unary_errors
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.words.said import said
from services.chat.access.rules import (
    hiding_absence,
    require,
    require_application_access,
    shown_applications,
    visible_chat,
)
from services.chat.admin.model_admin import ModelAdmin
from services.chat.callers.chat_caller import Caller, CallerKind, current_caller
from services.chat.chat_list import ChatList, chat_title
from services.chat.chat_messages import application_fields, application_message, chat_summary, public_application
from services.chat.store import ChatStore

# Said to anyone but a share-link visitor asking for a chat list: it is a visitor's own history.
NO_CHAT_LIST = said("only_share_link_visitor_has_chat")


def _chat_list_owner(caller: Caller, application_id: str) -> str:
    """The visitor whose chats the list holds: a share-link visitor's own, nobody else's."""
    with hiding_absence(caller):
        require_application_access(caller, application_id)
    if caller.kind is not CallerKind.VISITOR:
        raise PermissionDenied(NO_CHAT_LIST)
    return caller.visitor_id


class ApplicationRpcs(pb_grpc.ApplicationServiceServicer):
    def __init__(self, store: ChatStore, retrieval: RetrievalStubs, rpc_timeout: float, model_admin: ModelAdmin):
        """``retrieval`` knows the datasets an application may name; ``model_admin`` its models."""
        self._store = store
        self._retrieval = retrieval
        self._rpc_timeout = rpc_timeout
        self._model_admin = model_admin
        self._chats = ChatList(store.sessions)

    async def _check_datasets(self, dataset_ids: list[str], already: frozenset[str] = frozenset()) -> None:
        """The datasets exist and share one embedding model; a user may add only datasets they may
        read (``already`` on the application stay, whoever added them)."""
        if not dataset_ids:
            return
        caller = current_caller()
        for dataset_id in dataset_ids:
            if dataset_id not in already:
                require(caller, Need.DATASET_READ, dataset_id)
        listed = await self._retrieval.datasets.ListDatasets(
            retrieval_service_pb2.ListDatasetsRequest(), timeout=self._rpc_timeout
        )
        known = {d.id: d for d in listed.datasets}
        unknown = [d for d in dataset_ids if d not in known]
        if unknown:
            raise NotFound(said("unknown_dataset_s", join_unknown=", ".join(unknown)))
        refusal = mixed_models([of_dataset(known[d]) for d in dataset_ids])  # one embedding model per application
        if refusal:
            raise InvalidRequest(refusal)

    @unary_errors
    async def CreateApplication(
        self, request: pb.CreateApplicationRequest, context: Context
    ) -> pb.CreateApplicationResponse:
        caller = current_caller()
        require(caller, Need.APPLICATION_CREATE)
        fields = application_fields(request.application)
        await self._check_datasets(fields["dataset_ids"])
        await self._model_admin.check_choice(fields["model_setting"])
        row = Application(**fields, **({"id": request.application.id} if request.application.id else {}))
        # An editor is granted what they create, in the same transaction.
        editor = caller.user is not None and caller.user.role is Role.EDITOR
        saved = await self._store.create_application(row, grant_to=caller.user_id if editor else "")
        return pb.CreateApplicationResponse(application=application_message(saved))

    @unary_errors
    async def GetApplication(self, request: pb.GetApplicationRequest, context: Context) -> pb.GetApplicationResponse:
        caller = current_caller()
        with hiding_absence(caller):
            require_application_access(caller, request.application_id, Need.APPLICATION_READ)
            application = application_message(await self._store.get_application(request.application_id))
        # A visitor gets what a chat page shows; prompts and search settings are the operator's.
        if caller.kind is CallerKind.VISITOR:
            application = public_application(application)
        return pb.GetApplicationResponse(application=application)

    @unary_errors
    async def UpdateApplication(
        self, request: pb.UpdateApplicationRequest, context: Context
    ) -> pb.UpdateApplicationResponse:
        # The application is named inside the message: checked here, not by the table's field.
        require(current_caller(), Need.APPLICATION_WRITE, request.application.id)
        row = await self._store.get_application(request.application.id)
        fields = application_fields(request.application)
        await self._check_datasets(fields["dataset_ids"], frozenset(row.dataset_ids or ()))
        await self._model_admin.check_choice(fields["model_setting"])
        saved = await self._store.update_application(row.id, fields)
        return pb.UpdateApplicationResponse(application=application_message(saved))

    @unary_errors
    async def ListApplications(
        self, request: pb.ListApplicationsRequest, context: Context
    ) -> pb.ListApplicationsResponse:
        caller = current_caller()
        require(caller, Need.APPLICATION_READ)
        listed = await self._store.list_applications(shown_applications(caller))
        return pb.ListApplicationsResponse(applications=[application_message(a) for a in listed])

    @unary_errors
    async def OpenChat(self, request: pb.OpenChatRequest, context: Context) -> pb.OpenChatResponse:
        caller = current_caller()
        visitor = caller.visitor_id if caller.kind is CallerKind.VISITOR else None
        with hiding_absence(caller):
            require_application_access(caller, request.application_id, Need.CHAT_ASK)
            chat = await self._store.open_chat(request.application_id, visitor)
        return pb.OpenChatResponse(chat_id=chat.id)

    @unary_errors
    async def ListChats(self, request: pb.ListChatsRequest, context: Context) -> pb.ListChatsResponse:
        owner = _chat_list_owner(current_caller(), request.application_id)
        if not 1 <= request.page <= MAX_PAGE:
            raise InvalidRequest(said("page_must_be_between_1_got", max_page=MAX_PAGE, request_page=request.page))
        if not 1 <= request.page_size <= MAX_PAGE_SIZE:
            raise InvalidRequest(
                said("page_size_must_be_between_1", max_page_size=MAX_PAGE_SIZE, request_page_size=request.page_size)
            )
        entries, total = await self._chats.page(request.application_id, owner, request.page, request.page_size)
        return pb.ListChatsResponse(chats=[chat_summary(e) for e in entries], total=total)

    @unary_errors
    async def RenameChat(self, request: pb.RenameChatRequest, context: Context) -> pb.ChatSummary:
        _chat_list_owner(current_caller(), request.application_id)
        title = chat_title(request.abstract)  # checked before the chat is looked up: nothing half-done
        chat = await visible_chat(self._store, request.chat_id, request.application_id)
        return chat_summary(await self._chats.rename(chat, title))

    @unary_errors
    async def DeleteChat(self, request: pb.DeleteChatRequest, context: Context) -> pb.DeleteChatResponse:
        _chat_list_owner(current_caller(), request.application_id)
        chat = await visible_chat(self._store, request.chat_id, request.application_id)
        await self._chats.hide(chat)
        return pb.DeleteChatResponse(deleted=True)
