"""The permission table on the chat service's own gRPC port: an editor reads and changes only the
applications granted to them (and those they create), a viewer reads the log of theirs and
changes nothing, lists show a user only what is granted, and a chat of an application the caller
may not see reads "not found" exactly as an unknown chat id does, to users as to keys and
visitors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as chat_grpc
from kbcore.db.tables import ChatRecord, RecordStatus
from kbcore.errors import PermissionDenied
from kbcore.rpc.caller_token import bearer
from kbcore.rpc.stubs import ChatStubs
from services.chat.access.rules import NOT_VISIBLE, UNLISTED, check_call
from services.chat.callers.chat_caller import Caller, CallerKind
from tests.grpc_status import outcome_of, status_of
from tools.seed_demo import DEMO_DATASET_ID

Metadata = tuple[tuple[str, str], ...]
Sessions = async_sessionmaker[AsyncSession]
SEE = "this application is not among those your account may see"
CHANGE = "your account may not change this application: ask an administrator for editor access to it"


@dataclass
class World:
    """Applications A and B, each with a chat holding one answered record; an editor and a
    viewer granted A only."""

    a: str
    b: str
    chat_a: str
    chat_b: str
    record_a: int
    record_b: int
    editor: Metadata
    viewer: Metadata
    editor_id: str


async def application(chat: ChatStubs, operator: Metadata, name: str) -> str:
    made = await chat.applications.CreateApplication(
        pb.CreateApplicationRequest(application=pb.Application(name=name)), metadata=operator
    )
    return str(made.application.id)


async def chat_with_record(
    chat: ChatStubs, operator: Metadata, sessions: Sessions, application_id: str
) -> tuple[str, int]:
    opened = await chat.applications.OpenChat(pb.OpenChatRequest(application_id=application_id), metadata=operator)
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=opened.chat_id, question="年假有几天？", status=RecordStatus.ANSWERED)
        session.add(record)
    return opened.chat_id, record.id


async def person(
    users: chat_grpc.UserServiceStub, operator: Metadata, name: str, role: Any, grants: list[str]
) -> tuple[str, Metadata]:
    made = await users.CreateUser(
        pb.CreateUserRequest(
            username=name,
            role=role,
            grants=[pb.Grant(kind=pb.GRANT_KIND_APPLICATION, object_id=g) for g in grants],
        ),
        metadata=operator,
    )
    link = await users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=made.id), metadata=operator)
    return made.id, bearer((await users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=link.code))).token)


@pytest.fixture
async def world(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, sessions: Sessions, unique: str
) -> World:
    a = await application(chat, operator, f"granted-{unique}")
    b = await application(chat, operator, f"other-{unique}")
    chat_a, record_a = await chat_with_record(chat, operator, sessions, a)
    chat_b, record_b = await chat_with_record(chat, operator, sessions, b)
    editor_id, editor = await person(users, operator, f"editor-{unique}", pb.ROLE_EDITOR, [a])
    _, viewer = await person(users, operator, f"viewer-{unique}", pb.ROLE_VIEWER, [a])
    return World(a, b, chat_a, chat_b, record_a, record_b, editor, viewer, editor_id)


def updated(application_id: str, name: str) -> pb.UpdateApplicationRequest:
    return pb.UpdateApplicationRequest(application=pb.Application(id=application_id, name=name))


async def test_an_editor_of_one_application_cannot_read_or_change_another(
    chat: ChatStubs, world: World, operator: Metadata
) -> None:
    w, me = world, world.editor
    assert (
        await chat.applications.GetApplication(pb.GetApplicationRequest(application_id=w.a), metadata=me)
    ).application.id == w.a
    assert (
        await chat.applications.UpdateApplication(updated(w.a, "renamed by its editor"), metadata=me)
    ).application.name == "renamed by its editor"
    reads = [
        chat.applications.GetApplication(pb.GetApplicationRequest(application_id=w.b), metadata=me),
        chat.answers.ExportRecords(pb.ExportRecordsRequest(application_id=w.b), metadata=me),
        chat.operations.ListLog(
            pb.ListLogRequest(filter=pb.LogFilter(application_id=w.b), page=1, page_size=10), metadata=me
        ),
        chat.operations.Usage(pb.UsageRequest(application_id=w.b), metadata=me),
    ]
    for call in reads:
        assert await status_of(call) == (grpc.StatusCode.PERMISSION_DENIED, SEE)
    changes = [
        chat.applications.UpdateApplication(updated(w.b, "taken over"), metadata=me),
        chat.applications.OpenChat(pb.OpenChatRequest(application_id=w.b), metadata=me),
        chat.access.CreateApiKey(pb.CreateApiKeyRequest(application_id=w.b), metadata=me),
        chat.access.ListApiKeys(pb.ListApiKeysRequest(application_id=w.b), metadata=me),
    ]
    for call in changes:
        assert await status_of(call) == (grpc.StatusCode.PERMISSION_DENIED, CHANGE)
    got = await chat.applications.GetApplication(pb.GetApplicationRequest(application_id=w.b), metadata=operator)
    assert got.application.name != "taken over"


def calls_naming_a_chat(chat: ChatStubs, chat_id: str, record_id: str, application_id: str, me: Metadata) -> list[Any]:
    """Every call that names a chat by its id (with the application when the call takes one)."""
    return [
        chat.answers.Ask(pb.AskRequest(chat_id=chat_id, message="年假有几天？"), metadata=me),
        chat.answers.Stop(pb.StopRequest(chat_id=chat_id), metadata=me),
        chat.answers.ListRecords(pb.ListRecordsRequest(chat_id=chat_id), metadata=me),
        chat.answers.ListRecords(pb.ListRecordsRequest(chat_id=chat_id, application_id=application_id), metadata=me),
        chat.answers.GetRecord(pb.GetRecordRequest(chat_id=chat_id, record_id=record_id), metadata=me),
        chat.answers.GetRecord(
            pb.GetRecordRequest(chat_id=chat_id, record_id=record_id, application_id=application_id), metadata=me
        ),
        chat.operations.VoteRecord(
            pb.VoteRecordRequest(chat_id=chat_id, record_id=record_id, vote=pb.VOTE_UP), metadata=me
        ),
        chat.operations.VoteRecord(
            pb.VoteRecordRequest(chat_id=chat_id, record_id=record_id, vote=pb.VOTE_UP, application_id=application_id),
            metadata=me,
        ),
    ]


async def test_another_applications_chat_reads_as_an_unknown_chat_to_a_user(
    chat: ChatStubs, world: World, unique: str
) -> None:
    """An editor of A naming B's chat (alone, or under A) gets what an unknown id gets, word for
    word, on every call: nothing tells them the chat exists."""
    w, me = world, world.editor
    others = calls_naming_a_chat(chat, w.chat_b, str(w.record_b), w.a, me)
    unknown = calls_naming_a_chat(chat, f"no-such-chat-{unique}", str(w.record_b), w.a, me)
    for other, missing in zip(others, unknown, strict=True):
        seen, expected = await status_of(other), await status_of(missing)
        assert seen == expected == (grpc.StatusCode.NOT_FOUND, str(NOT_VISIBLE))
    # A viewer, who may ask nowhere, is refused stopping before any chat is looked up (the same
    # words for A's chat, B's and none), and reads B's chat as an unknown one.
    stops = [
        await status_of(chat.answers.Stop(pb.StopRequest(chat_id=chat_id), metadata=w.viewer))
        for chat_id in (w.chat_a, w.chat_b, f"no-such-chat-{unique}")
    ]
    assert stops == [(grpc.StatusCode.PERMISSION_DENIED, CHANGE)] * 3
    reads = [
        await status_of(chat.answers.ListRecords(pb.ListRecordsRequest(chat_id=chat_id), metadata=w.viewer))
        for chat_id in (w.chat_b, f"no-such-chat-{unique}")
    ]
    assert reads == [(grpc.StatusCode.NOT_FOUND, str(NOT_VISIBLE))] * 2


async def test_lists_show_a_user_only_what_is_granted(chat: ChatStubs, world: World, operator: Metadata) -> None:
    listed = await chat.applications.ListApplications(pb.ListApplicationsRequest(), metadata=world.viewer)
    assert [a.id for a in listed.applications] == [world.a]
    everything = await chat.applications.ListApplications(pb.ListApplicationsRequest(), metadata=operator)
    assert {world.a, world.b} <= {a.id for a in everything.applications}
    log = await chat.operations.ListLog(
        pb.ListLogRequest(filter=pb.LogFilter(), page=1, page_size=100), metadata=world.viewer
    )
    assert {e.application_id for e in log.entries} == {world.a} and log.total == 1
    exported = await chat.operations.ExportLog(pb.ListLogRequest(filter=pb.LogFilter()), metadata=world.editor)
    assert {e.application_id for e in exported.entries} == {world.a}


async def test_a_viewer_reads_the_log_and_changes_nothing(chat: ChatStubs, world: World) -> None:
    w, me = world, world.viewer
    log = await chat.operations.ListLog(
        pb.ListLogRequest(filter=pb.LogFilter(application_id=w.a), page=1, page_size=10), metadata=me
    )
    assert [int(e.record.id) for e in log.entries] == [w.record_a]
    for call in (
        chat.applications.GetApplication(pb.GetApplicationRequest(application_id=w.a), metadata=me),
        chat.answers.ListRecords(pb.ListRecordsRequest(chat_id=w.chat_a), metadata=me),
        chat.answers.ExportRecords(pb.ExportRecordsRequest(application_id=w.a), metadata=me),
        chat.operations.Usage(pb.UsageRequest(application_id=w.a), metadata=me),
        chat.models.ListModels(pb.ListModelsRequest(), metadata=me),
    ):
        assert (await outcome_of(call))[0] == grpc.StatusCode.OK
    for call in (
        chat.applications.UpdateApplication(updated(w.a, "renamed by a viewer"), metadata=me),
        chat.applications.OpenChat(pb.OpenChatRequest(application_id=w.a), metadata=me),
        chat.answers.Ask(pb.AskRequest(chat_id=w.chat_a, message="年假有几天？"), metadata=me),
        chat.operations.VoteRecord(
            pb.VoteRecordRequest(chat_id=w.chat_a, record_id=str(w.record_a), vote=pb.VOTE_UP), metadata=me
        ),
        chat.access.CreateAccessToken(pb.CreateAccessTokenRequest(application_id=w.a), metadata=me),
    ):
        assert await status_of(call) == (grpc.StatusCode.PERMISSION_DENIED, CHANGE)
    for call in (
        chat.applications.CreateApplication(
            pb.CreateApplicationRequest(application=pb.Application(name="mine")), metadata=me
        ),
        chat.models.CreateModel(
            pb.CreateModelRequest(name="m", provider="openai", model="x", purpose="chat"), metadata=me
        ),
    ):
        code, _ = await status_of(call)
        assert code == grpc.StatusCode.PERMISSION_DENIED


async def test_an_editors_new_application_is_granted_to_them_and_cannot_take_an_existing_id(
    chat: ChatStubs, world: World, operator: Metadata
) -> None:
    made = await chat.applications.CreateApplication(
        pb.CreateApplicationRequest(application=pb.Application(name="the editor's own")), metadata=world.editor
    )
    new_id = made.application.id
    me = await chat.access.WhoAmI(pb.WhoAmIRequest(), metadata=world.editor)
    granted = {g.object_id for g in me.user.grants if g.kind == pb.GRANT_KIND_APPLICATION}
    assert granted == {world.a, new_id} and me.kind == pb.WhoAmIResponse.KIND_USER
    await chat.applications.UpdateApplication(updated(new_id, "still mine"), metadata=world.editor)
    await chat.access.CreateApiKey(pb.CreateApiKeyRequest(application_id=new_id), metadata=world.editor)
    # Creating "again" an application that exists would replace it: refused, and B is untouched.
    code, _ = await status_of(
        chat.applications.CreateApplication(
            pb.CreateApplicationRequest(application=pb.Application(id=world.b, name="hijacked")), metadata=world.editor
        )
    )
    assert code == grpc.StatusCode.ABORTED
    b = await chat.applications.GetApplication(pb.GetApplicationRequest(application_id=world.b), metadata=operator)
    assert b.application.name != "hijacked"
    # Nor may an editor put a dataset into an application that is not granted to them.
    code, message = await status_of(
        chat.applications.UpdateApplication(
            pb.UpdateApplicationRequest(application=pb.Application(id=new_id, name="x", dataset_ids=[DEMO_DATASET_ID])),
            metadata=world.editor,
        )
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED and "dataset" in message


async def test_keys_and_visitors_keep_reading_another_applications_chats_as_not_found(
    chat: ChatStubs, world: World, operator: Metadata
) -> None:
    key = bearer(
        (await chat.access.CreateApiKey(pb.CreateApiKeyRequest(application_id=world.a), metadata=operator)).key
    )
    for call in (
        chat.applications.OpenChat(pb.OpenChatRequest(application_id=world.b), metadata=key),
        chat.answers.ListRecords(pb.ListRecordsRequest(chat_id=world.chat_b), metadata=key),
        chat.answers.ExportRecords(pb.ExportRecordsRequest(application_id=world.b), metadata=key),
    ):
        assert await status_of(call) == (grpc.StatusCode.NOT_FOUND, str(NOT_VISIBLE))
    code, _ = await status_of(chat.applications.ListApplications(pb.ListApplicationsRequest(), metadata=key))
    assert code == grpc.StatusCode.PERMISSION_DENIED
    who = await chat.access.WhoAmI(pb.WhoAmIRequest(), metadata=operator)
    assert who.kind == pb.WhoAmIResponse.KIND_OPERATOR


def test_a_call_missing_from_the_permission_table_is_refused_to_everyone() -> None:
    with pytest.raises(PermissionDenied) as refused:
        check_call(Caller(CallerKind.OPERATOR), "/kb.chat.v1.AnswerService/NotInTheTable", pb.WhoAmIRequest())
    assert refused.value.words == UNLISTED
