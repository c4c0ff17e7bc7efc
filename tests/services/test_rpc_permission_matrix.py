"""The permission matrix over real gRPC: every method of the chat and retrieval services in the
permission table (``kbcore.permissions.table.RPCS``; the context service's are the chat service's
own calls and left out) × every kind of caller (docs/access.md, People and roles), each request
naming application A and dataset A, made for the test, wherever the table reads an object.

Chat-service callers present ``authorization: Bearer``; retrieval-service callers the principal
the gateway would send (``kb-caller-bin``), never nothing: a call without it is the deployment's
own and unchecked. What each caller should get is written out by hand per need (``EXPECT``), not
computed from the rule under test, and only its class is compared: refused or let through.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as cpb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as rpb
from kbcore.db.tables import ChatRecord, RecordStatus
from kbcore.permissions.roles import Kind, Need, Principal, Role
from kbcore.permissions.table import RPCS
from kbcore.permissions.wire import principal_metadata
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from services.chat.access.rules import NOT_VISIBLE
from tests.grpc_status import outcome_of
from tests.harness import Stack
from tests.permission_expectations import (
    ADMIN,
    ANONYMOUS,
    CALLERS,
    EDITOR,
    EXPECT,
    KEY,
    OTHER,
    PASSWORD,
    VIEWER,
    VISITOR,
    expected_through,
)

ROLES = {VIEWER: Role.VIEWER, OTHER: Role.EDITOR, EDITOR: Role.EDITOR, ADMIN: Role.ADMIN}
QUESTION = "年休假有几天？"
KEYWORD = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD, top_n=5)
CHAT_SIDE = frozenset({VISITOR, KEY})

CHAT_STUBS = {
    "AnswerService": "answers",
    "ApplicationService": "applications",
    "AccessService": "access",
    "OperationsService": "operations",
    "ModelService": "models",
    "UserService": "users",
}
RETRIEVAL_STUBS = {
    "SearchService": "search",
    "DatasetService": "datasets",
    "DocumentService": "documents",
    "ParagraphService": "paragraphs",
}
Ids = dict[str, str]
Metadata = tuple[tuple[str, Any], ...]


@dataclass
class World:
    """What the requests name and who sends them."""

    chat: ChatStubs
    retrieval: RetrievalStubs
    operator: Metadata
    unique: str
    ids: Ids = field(default_factory=dict)
    own: dict[str, Ids] = field(default_factory=dict)  # per caller: a chat and record of its own
    tokens: dict[str, str] = field(default_factory=dict)
    usernames: dict[str, str] = field(default_factory=dict)
    user_ids: dict[str, str] = field(default_factory=dict)

    def principal(self, caller: str, also: frozenset[str] = frozenset()) -> Principal:
        """What the gateway would send for ``caller``; ``also``: a stand-in for dataset A (a
        throwaway one a call uses up), granted wherever A is."""
        a, app = self.ids["dataset"], self.ids["app"]
        if caller == ANONYMOUS:
            return Principal(Kind.ANONYMOUS)
        if caller in CHAT_SIDE:
            return Principal(Kind.VISITOR if caller == VISITOR else Kind.APPLICATION, application_id=app)
        datasets, apps = {OTHER: ({self.ids["dataset_b"]}, {self.ids["app_b"]}), ADMIN: (set(), set())}.get(
            caller, ({a, *also}, {app})
        )
        return Principal(
            Kind.USER,
            ROLES[caller],
            user_id=self.user_ids[caller],
            username=self.usernames[caller],
            datasets=frozenset(datasets),
            applications=frozenset(apps),
        )


Fresh = Callable[[World, str], Awaitable[Ids]]


@dataclass(frozen=True)
class Case:
    method: str  # "package.Service/Method", as RPCS lists it
    request: Callable[[Ids], Any]
    reaches: bool = False  # the chat service checks the application of a chat the request names
    visitors_only: bool = False  # a share-link visitor's own chat list: the chat service refuses everyone else
    fresh: Fresh | None = None  # ids of a thing of its own for a caller expected through (it is used up)


# --- throwaway targets ------------------------------------------------------------------------


async def add_document(world: World, dataset_id: str, name: str) -> str:
    """A ready one-paragraph document, added by the deployment itself."""
    paragraphs = rpb.ParagraphList(paragraphs=[rpb.ParagraphInput(title="年休假", content="年休假5天。")])
    request = rpb.AddDocumentRequest(dataset_id=dataset_id, name=name, paragraphs=paragraphs)
    [document] = [e.document async for e in world.retrieval.documents.AddDocument(request) if e.HasField("document")]
    return str(document.id)


async def fresh_dataset(world: World, caller: str) -> Ids:
    made = await world.retrieval.datasets.CreateDataset(rpb.CreateDatasetRequest(name=f"rpc-gone-{caller}"))
    return {"dataset": made.dataset.id, "stand_in": made.dataset.id}


async def fresh_document(world: World, _: str) -> Ids:
    return {"document": await add_document(world, world.ids["dataset"], "rpc-gone")}


async def fresh_paragraph(world: World, _: str) -> Ids:
    request = rpb.AddParagraphRequest(
        dataset_id=world.ids["dataset"], document_id=world.ids["document"], content="将被删除的段落。"
    )
    return {"paragraph": (await world.retrieval.paragraphs.AddParagraph(request)).id}


async def fresh_question(world: World, caller: str) -> Ids:
    request = rpb.AttachQuestionRequest(
        dataset_id=world.ids["dataset"],
        document_id=world.ids["document"],
        paragraph_id=world.ids["paragraph"],
        content=f"{caller} 会怎么问年休假？",
    )
    return {"question": (await world.retrieval.paragraphs.AttachQuestion(request)).id}


async def fresh_visitor_chat(world: World, caller: str) -> Ids:
    opened = await world.chat.applications.OpenChat(
        cpb.OpenChatRequest(application_id=world.ids["app"]), metadata=bearer(world.tokens[caller])
    )
    return {"chat": opened.chat_id}


async def fresh_session(world: World, caller: str) -> Ids:
    signed = await world.chat.users.SignIn(cpb.SignInRequest(username=world.usernames[caller], password=PASSWORD))
    return {"token": signed.token}


async def fresh_signin_link(world: World, _: str) -> Ids:
    link = await world.chat.users.CreateSignInLink(
        cpb.CreateSignInLinkRequest(user_id=world.ids["user_gone"]), metadata=world.operator
    )
    return {"code": link.code}


async def fresh_link(world: World, _: str) -> Ids:
    """The share link as it is now (an earlier caller's rotation changed it)."""
    listed = await world.chat.access.ListAccessTokens(
        cpb.ListAccessTokensRequest(application_id=world.ids["app"]), metadata=world.operator
    )
    return {"link": listed.tokens[0].access_token}


# --- every method, with a minimal request -----------------------------------------------------

C, R = "kb.chat.v1.", "kb.retrieval.v1."


def _log(i: Ids) -> cpb.ListLogRequest:
    return cpb.ListLogRequest(filter=cpb.LogFilter(application_id=i["app"]), page=1, page_size=10)


def _doc(i: Ids) -> dict[str, str]:
    return {"dataset_id": i["dataset"], "document_id": i["document"]}


CHAT_CASES: tuple[Case, ...] = (
    Case(f"{C}UserService/SignIn", lambda i: cpb.SignInRequest(username=i["viewer_name"], password=PASSWORD)),
    Case(
        f"{C}UserService/RedeemSignInLink",
        lambda i: cpb.RedeemSignInLinkRequest(code=i["code"]),
        fresh=fresh_signin_link,
    ),
    Case(f"{C}AccessService/AuthenticateVisitor", lambda i: cpb.AuthenticateVisitorRequest(access_token=i["link"])),
    Case(f"{C}AccessService/GetShareLinkSites", lambda i: cpb.GetShareLinkSitesRequest(access_token=i["link"])),
    Case(f"{C}AccessService/WhoAmI", lambda i: cpb.WhoAmIRequest()),
    Case(f"{C}AnswerService/Ask", lambda i: cpb.AskRequest(chat_id=i["chat"], message=QUESTION), reaches=True),
    Case(f"{C}AnswerService/Stop", lambda i: cpb.StopRequest(chat_id=i["chat"]), reaches=True),
    Case(
        f"{C}AnswerService/GetRecord",
        lambda i: cpb.GetRecordRequest(chat_id=i["chat"], record_id=i["record"], application_id=i["app"]),
    ),
    Case(
        f"{C}AnswerService/ListRecords",
        lambda i: cpb.ListRecordsRequest(chat_id=i["chat"], page=1, page_size=10, application_id=i["app"]),
    ),
    Case(f"{C}AnswerService/ExportRecords", lambda i: cpb.ExportRecordsRequest(application_id=i["app"])),
    Case(
        f"{C}ApplicationService/CreateApplication",
        lambda i: cpb.CreateApplicationRequest(application=cpb.Application(name=f"rpc-made-{i['caller']}")),
    ),
    Case(f"{C}ApplicationService/GetApplication", lambda i: cpb.GetApplicationRequest(application_id=i["app"])),
    Case(
        f"{C}ApplicationService/UpdateApplication",
        lambda i: cpb.UpdateApplicationRequest(
            application=cpb.Application(id=i["app"], name=f"rpc-A-{i['unique']}", dataset_ids=[i["dataset"]])
        ),
    ),
    Case(f"{C}ApplicationService/ListApplications", lambda i: cpb.ListApplicationsRequest()),
    Case(f"{C}ApplicationService/OpenChat", lambda i: cpb.OpenChatRequest(application_id=i["app"])),
    Case(
        f"{C}ApplicationService/ListChats",
        lambda i: cpb.ListChatsRequest(application_id=i["app"], page=1, page_size=10),
        visitors_only=True,
    ),
    Case(
        f"{C}ApplicationService/RenameChat",
        lambda i: cpb.RenameChatRequest(application_id=i["app"], chat_id=i["chat"], abstract="renamed"),
        visitors_only=True,
    ),
    Case(f"{C}AccessService/CreateApiKey", lambda i: cpb.CreateApiKeyRequest(application_id=i["app"])),
    Case(f"{C}AccessService/ListApiKeys", lambda i: cpb.ListApiKeysRequest(application_id=i["app"])),
    Case(
        f"{C}AccessService/UpdateApiKey", lambda i: cpb.UpdateApiKeyRequest(application_id=i["app"], id=i["spare_key"])
    ),
    Case(
        f"{C}AccessService/RotateApiKey", lambda i: cpb.RotateApiKeyRequest(application_id=i["app"], id=i["spare_key"])
    ),
    Case(f"{C}AccessService/ListAccessTokens", lambda i: cpb.ListAccessTokensRequest(application_id=i["app"])),
    Case(f"{C}OperationsService/ListLog", _log),
    Case(f"{C}OperationsService/ExportLog", _log),
    Case(
        f"{C}OperationsService/VoteRecord",
        lambda i: cpb.VoteRecordRequest(
            chat_id=i["chat"], record_id=i["record"], vote=cpb.VOTE_UP, application_id=i["app"]
        ),
    ),
    Case(
        f"{C}OperationsService/ImproveRecord",
        lambda i: cpb.ImproveRecordRequest(
            application_id=i["app"],
            chat_id=i["chat"],
            record_id=i["record"],
            dataset_id=i["dataset"],
            question=QUESTION,
            answer="年休假5天。",
        ),
    ),
    Case(f"{C}OperationsService/GapReport", lambda i: cpb.GapReportRequest(application_id=i["app"])),
    Case(f"{C}OperationsService/Usage", lambda i: cpb.UsageRequest(application_id=i["app"])),
    Case(f"{C}OperationsService/ListAudit", lambda i: cpb.ListAuditRequest(page=1, page_size=10)),
    Case(
        f"{C}ModelService/CreateModel",
        lambda i: cpb.CreateModelRequest(
            name=f"rpc-made-{i['caller']}",
            provider="openai",
            base_url="http://127.0.0.1:9/v1",
            model="m",
            purpose="chat",
        ),
    ),
    Case(f"{C}ModelService/ListModels", lambda i: cpb.ListModelsRequest()),
    Case(f"{C}ModelService/UpdateModel", lambda i: cpb.UpdateModelRequest(id=i["model"], name="rpc-renamed")),
    Case(f"{C}ModelService/CheckModel", lambda i: cpb.CheckModelRequest(id=i["model"])),
    Case(f"{C}UserService/ChangePassword", lambda i: cpb.ChangePasswordRequest(current_password=PASSWORD)),
    Case(f"{C}UserService/CreatePersonalToken", lambda i: cpb.CreatePersonalTokenRequest(name="rpc-matrix")),
    Case(f"{C}UserService/ListPersonalTokens", lambda i: cpb.ListPersonalTokensRequest()),
    Case(f"{C}UserService/RevokePersonalToken", lambda i: cpb.RevokePersonalTokenRequest(token_id="0" * 32)),
    Case(f"{C}UserService/SignOut", lambda i: cpb.SignOutRequest(), fresh=fresh_session),
    Case(
        f"{C}UserService/CreateUser",
        lambda i: cpb.CreateUserRequest(
            username=f"rpc-made-{i['caller'].replace(' ', '-')}-{i['unique']}", password=PASSWORD, role=cpb.ROLE_VIEWER
        ),
    ),
    Case(f"{C}UserService/ListUsers", lambda i: cpb.ListUsersRequest()),
    Case(f"{C}UserService/UpdateUser", lambda i: cpb.UpdateUserRequest(user_id=i["user_gone"])),
    Case(f"{C}UserService/CreateSignInLink", lambda i: cpb.CreateSignInLinkRequest(user_id=i["user_gone"])),
)


def _streamed(dataset_id: str) -> list[rpb.UploadPart]:
    """A streamed upload's first message, its head, which the permission check reads (and alone:
    a client still writing when the call is refused reads the refusal as grpc's own internal
    error). Let through, the call is then refused for bringing no file."""
    return [rpb.UploadPart(head=rpb.UploadHead(dataset_id=dataset_id, declared_bytes=100))]


RETRIEVAL_CASES: tuple[Case, ...] = (
    Case(
        f"{R}SearchService/Retrieve",
        lambda i: rpb.RetrieveRequest(dataset_ids=[i["dataset"]], question=QUESTION, search=KEYWORD),
    ),
    Case(
        f"{R}SearchService/Search",
        lambda i: rpb.SearchRequest(dataset_ids=[i["dataset"]], query=QUESTION, search=KEYWORD),
    ),
    Case(f"{R}SearchService/Evaluate", lambda i: rpb.EvaluateRequest(dataset_ids=[i["dataset"]], search=KEYWORD)),
    Case(f"{R}SearchService/GroupTexts", lambda i: rpb.GroupTextsRequest(texts=["年休假", "病假"])),
    Case(f"{R}DatasetService/CreateDataset", lambda i: rpb.CreateDatasetRequest(name=f"rpc-made-{i['caller']}")),
    Case(f"{R}DatasetService/ListDatasets", lambda i: rpb.ListDatasetsRequest()),
    Case(
        f"{R}DatasetService/UpdateDataset",
        lambda i: rpb.UpdateDatasetRequest(dataset_id=i["dataset"], name="rpc-renamed"),
    ),
    Case(f"{R}DocumentService/AddDocument", lambda i: rpb.AddDocumentRequest(dataset_id=i["dataset"], name="empty")),
    Case(
        f"{R}DocumentService/SubmitDocuments",
        lambda i: rpb.SubmitDocumentsRequest(dataset_id=i["dataset"], name="empty"),
    ),
    Case(f"{R}DocumentService/ListDocuments", lambda i: rpb.ListDocumentsRequest(dataset_id=i["dataset"])),
    Case(f"{R}DocumentService/GetDocument", lambda i: rpb.GetDocumentRequest(**_doc(i))),
    Case(f"{R}DocumentService/SyncDocuments", lambda i: rpb.SyncDocumentsRequest(dataset_id=i["dataset"])),
    Case(
        f"{R}DocumentService/PreviewSplit",
        lambda i: rpb.PreviewSplitRequest(file=rpb.FileContent(filename="规定.md", data="# 规定\n\n正文。".encode())),
    ),
    Case(f"{R}DocumentService/UploadDocuments", lambda i: _streamed(i["dataset"])),
    Case(f"{R}DocumentService/PreviewUploads", lambda i: _streamed("")),
    Case(f"{R}ParagraphService/ListParagraphs", lambda i: rpb.ListParagraphsRequest(**_doc(i), page=1, page_size=10)),
    Case(f"{R}ParagraphService/AddParagraph", lambda i: rpb.AddParagraphRequest(**_doc(i), content="新段落。")),
    Case(
        f"{R}ParagraphService/UpdateParagraph",
        lambda i: rpb.UpdateParagraphRequest(
            **_doc(i), paragraph_id=i["paragraph"], content="年休假5天。", enabled=True
        ),
    ),
    Case(f"{R}ParagraphService/ListQuestions", lambda i: rpb.ListQuestionsRequest(**_doc(i))),
    Case(
        f"{R}ParagraphService/AttachQuestion",
        lambda i: rpb.AttachQuestionRequest(**_doc(i), paragraph_id=i["paragraph"], content="一年能休几天？"),
    ),
    Case(
        f"{R}ParagraphService/UpdateQuestion",
        lambda i: rpb.UpdateQuestionRequest(dataset_id=i["dataset"], question_id=i["question"], content="休几天？"),
        fresh=fresh_question,
    ),
)
# What uses things up, last (each caller expected through gets one of its own); the share link's
# rotation very last, as it ends the visitor's token.
LAST_CASES: tuple[Case, ...] = (
    Case(f"{R}DocumentService/CancelIngestion", lambda i: rpb.CancelIngestionRequest(**_doc(i)), fresh=fresh_document),
    Case(
        f"{R}ParagraphService/DetachQuestion",
        lambda i: rpb.DetachQuestionRequest(dataset_id=i["dataset"], question_id=i["question"]),
        fresh=fresh_question,
    ),
    Case(
        f"{R}ParagraphService/DeleteParagraph",
        lambda i: rpb.DeleteParagraphRequest(**_doc(i), paragraph_id=i["paragraph"]),
        fresh=fresh_paragraph,
    ),
    Case(f"{R}DocumentService/DeleteDocument", lambda i: rpb.DeleteDocumentRequest(**_doc(i)), fresh=fresh_document),
    Case(
        f"{R}DatasetService/DeleteDataset",
        lambda i: rpb.DeleteDatasetRequest(dataset_id=i["dataset"]),
        fresh=fresh_dataset,
    ),
    Case(
        f"{C}ApplicationService/DeleteChat",
        lambda i: cpb.DeleteChatRequest(application_id=i["app"], chat_id=i["chat"]),
        visitors_only=True,
        fresh=fresh_visitor_chat,
    ),
    Case(f"{C}ModelService/DeleteModel", lambda i: cpb.DeleteModelRequest(id=i["model"])),
    Case(f"{C}UserService/DeleteUser", lambda i: cpb.DeleteUserRequest(user_id=i["user_gone"])),
    Case(f"{C}AccessService/CreateAccessToken", lambda i: cpb.CreateAccessTokenRequest(application_id=i["app"])),
    Case(
        f"{C}AccessService/UpdateAccessToken",
        lambda i: cpb.UpdateAccessTokenRequest(application_id=i["app"], access_token=i["link"]),
    ),
    Case(
        f"{C}AccessService/RotateAccessToken",
        lambda i: cpb.RotateAccessTokenRequest(application_id=i["app"], access_token=i["link"]),
        fresh=fresh_link,
    ),
)
CASES = CHAT_CASES + RETRIEVAL_CASES + LAST_CASES


def expected_of(case: Case, caller: str) -> bool:
    """The hand-written expectation for ``case`` (``tests.permission_expectations``)."""
    return expected_through(RPCS[case.method], caller, reaches=case.reaches, visitors_only=case.visitors_only)


def refused(caller: str, outcome: Outcome) -> bool:
    """UNAUTHENTICATED and PERMISSION_DENIED refuse. NOT_FOUND is ambiguous: the chat service
    answers "not found" for what is not the caller's (so ids cannot be probed): anything outside
    a key's or a visitor's own, and for a person a chat in an application they may not read,
    always in the words of ``NOT_VISIBLE``; but it tells a person allowed to reach a thing
    plainly that it is missing. So it is a refusal for the chat-side callers, and in those words."""
    if outcome.code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return True
    return outcome.code == grpc.StatusCode.NOT_FOUND and (caller in CHAT_SIDE or outcome.message == str(NOT_VISIBLE))


# --- the world the requests name ----------------------------------------------------------


async def record_in(sessions: async_sessionmaker[AsyncSession], chat_id: str) -> str:
    """An answered record in the chat (written directly: answering is not what is tested here)."""
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=chat_id, question=QUESTION, status=RecordStatus.ANSWERED)
        session.add(record)
    return str(record.id)


async def application(world: World, name: str, dataset_id: str) -> str:
    made = await world.chat.applications.CreateApplication(
        cpb.CreateApplicationRequest(application=cpb.Application(name=name, dataset_ids=[dataset_id])),
        metadata=world.operator,
    )
    return str(made.application.id)


async def datasets_and_applications(world: World) -> None:
    """Dataset A (one ready document), application A on it with a key, a spare key and a share
    link; dataset B and application B for the editor of another."""
    datasets = world.retrieval.datasets
    a = (await datasets.CreateDataset(rpb.CreateDatasetRequest(name=f"rpc-A-{world.unique}"))).dataset.id
    b = (await datasets.CreateDataset(rpb.CreateDatasetRequest(name=f"rpc-B-{world.unique}"))).dataset.id
    world.ids.update(dataset=a, dataset_b=b, document=await add_document(world, a, "员工手册"))
    listed = await world.retrieval.paragraphs.ListParagraphs(
        rpb.ListParagraphsRequest(dataset_id=a, document_id=world.ids["document"], page=1, page_size=10)
    )
    world.ids["paragraph"] = listed.paragraphs[0].id
    world.ids.update(await fresh_question(world, "operator"))
    world.ids["app"] = app = await application(world, f"rpc-A-{world.unique}", a)
    world.ids["app_b"] = await application(world, f"rpc-B-{world.unique}", b)
    access, op = world.chat.access, world.operator
    world.tokens[KEY] = (await access.CreateApiKey(cpb.CreateApiKeyRequest(application_id=app), metadata=op)).key
    world.ids["spare_key"] = (await access.CreateApiKey(cpb.CreateApiKeyRequest(application_id=app), metadata=op)).id
    link = await access.CreateAccessToken(cpb.CreateAccessTokenRequest(application_id=app), metadata=op)
    world.ids["link"] = link.access_token


async def people(world: World) -> None:
    """The four people, signed in, and one to be changed and deleted."""
    grants = {
        VIEWER: (world.ids["dataset"], world.ids["app"]),
        OTHER: (world.ids["dataset_b"], world.ids["app_b"]),
        EDITOR: (world.ids["dataset"], world.ids["app"]),
    }
    role = {VIEWER: cpb.ROLE_VIEWER, OTHER: cpb.ROLE_EDITOR, EDITOR: cpb.ROLE_EDITOR, ADMIN: cpb.ROLE_ADMIN}
    for caller in ROLES:
        dataset, app = grants.get(caller, ("", ""))
        request = cpb.CreateUserRequest(
            username=f"rpc-{caller.replace(' ', '-')}-{world.unique}",
            password=PASSWORD,
            role=role[caller],
            grants=[
                cpb.Grant(kind=cpb.GRANT_KIND_DATASET, object_id=dataset),
                cpb.Grant(kind=cpb.GRANT_KIND_APPLICATION, object_id=app),
            ]
            if dataset
            else [],
        )
        made = await world.chat.users.CreateUser(request, metadata=world.operator)
        world.usernames[caller], world.user_ids[caller] = made.username, made.id
        world.tokens[caller] = (await fresh_session(world, caller))["token"]
    gone = cpb.CreateUserRequest(username=f"rpc-gone-{world.unique}", password=PASSWORD, role=cpb.ROLE_VIEWER)
    world.ids["user_gone"] = (await world.chat.users.CreateUser(gone, metadata=world.operator)).id
    world.ids["viewer_name"] = world.usernames[VIEWER]


async def chats_and_model(world: World, sessions: async_sessionmaker[AsyncSession]) -> None:
    """A chat in A with a record (the operator's), the visitor's own, and a model endpoint."""
    chats = world.chat.applications
    opened = await chats.OpenChat(cpb.OpenChatRequest(application_id=world.ids["app"]), metadata=world.operator)
    world.ids.update(chat=opened.chat_id, record=await record_in(sessions, opened.chat_id))
    visitor = await world.chat.access.AuthenticateVisitor(
        cpb.AuthenticateVisitorRequest(access_token=world.ids["link"])
    )
    world.tokens[VISITOR] = visitor.token
    own = await fresh_visitor_chat(world, VISITOR)
    world.own[VISITOR] = {**own, "record": await record_in(sessions, own["chat"])}
    model = cpb.CreateModelRequest(
        name=f"rpc-{world.unique}", provider="openai", base_url="http://127.0.0.1:9/v1", model="m", purpose="chat"
    )
    world.ids["model"] = (await world.chat.models.CreateModel(model, metadata=world.operator)).id


# --- running the matrix ---------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    code: grpc.StatusCode
    message: str


async def send(world: World, case: Case, caller: str) -> Outcome:
    ids = {**world.ids, **world.own.get(caller, {}), "caller": caller, "unique": world.unique}
    if case.fresh is not None and expected_of(case, caller):
        ids.update(await case.fresh(world, caller))
    package_service, method = case.method.rsplit("/", 1)
    service = package_service.rsplit(".", 1)[1]
    metadata: Metadata
    if case.method.startswith(R):
        stub = getattr(world.retrieval, RETRIEVAL_STUBS[service])
        also = frozenset({ids["stand_in"]}) if "stand_in" in ids else frozenset()
        metadata = principal_metadata(world.principal(caller, also))  # never none: that is the deployment
    else:
        stub = getattr(world.chat, CHAT_STUBS[service])
        token = ids.get("token") or world.tokens.get(caller)
        metadata = bearer(token) if token else ()
    call = getattr(stub, method)(case.request(ids), metadata=metadata, timeout=120)
    return Outcome(*await outcome_of(call))


@pytest.fixture(scope="module")
async def outcomes(
    stack: Stack, sessions: async_sessionmaker[AsyncSession]
) -> AsyncIterator[dict[tuple[str, str], Outcome]]:
    chat_channel = open_channel(stack.chat_target, stack.credential)
    retrieval_channel = open_channel(stack.retrieval_target, stack.credential)
    operator = bearer(operator_token(stack.settings))
    world = World(ChatStubs.of(chat_channel), RetrievalStubs.of(retrieval_channel), operator, uuid.uuid4().hex[:8])
    await datasets_and_applications(world)
    await people(world)
    await chats_and_model(world, sessions)
    found: dict[tuple[str, str], Outcome] = {}
    for case in CASES:
        for caller in CALLERS:
            found[case.method, caller] = await send(world, case, caller)
    yield found
    await chat_channel.close()
    await retrieval_channel.close()


def test_the_cases_are_every_chat_and_retrieval_method_in_the_table() -> None:
    methods = [case.method for case in CASES]
    assert len(methods) == len(set(methods)), "a method is listed twice"
    assert set(methods) == {m for m in RPCS if not m.startswith("kb.context.")}
    assert set(EXPECT) == set(Need), "every need has a hand-written row"


async def test_every_method_was_called_by_every_caller(outcomes: dict[tuple[str, str], Outcome]) -> None:
    wanted = {(m, caller) for m in RPCS if not m.startswith("kb.context.") for caller in CALLERS}
    assert set(outcomes) == wanted


async def test_every_caller_gets_what_the_hand_written_table_expects_on_every_method(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    surprises = []
    for case in CASES:
        for caller in CALLERS:
            outcome, through = outcomes[case.method, caller], expected_of(case, caller)
            got = f"{outcome.code.name} {outcome.message}"
            if through and refused(caller, outcome):
                surprises.append(f"{case.method} as {caller}: expected through, got {got}")
            elif through and outcome.code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                surprises.append(f"{case.method} as {caller}: expected through, failed with {got}")
            elif not through and not refused(caller, outcome):
                surprises.append(f"{case.method} as {caller}: expected refused, got {got}")
    print(f"the matrix: {len(CASES)} methods × {len(CALLERS)} callers = {len(outcomes)} calls")
    assert not surprises, f"{len(surprises)} of {len(outcomes)}:\n" + "\n".join(surprises)
