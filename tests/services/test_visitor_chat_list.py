"""A share-link visitor's own chats over gRPC: listed newest first with their first question
as title, renamed, deleted (hidden from the visitor for good, kept for the operator's log), and
a page loaded again keeping its visitor. Bad titles and pages are refused with nothing changed."""

from __future__ import annotations

import grpc
import pytest

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.rpc.caller_token import bearer
from services.chat.access.rules import NOT_VISIBLE
from services.chat.application_rpcs import NO_CHAT_LIST
from tests.grpc_status import status_of
from tools.seed_demo import DEMO_APPLICATION_ID

Metadata = tuple[tuple[str, str], ...]


async def _link(chat, operator) -> str:
    link = await chat.access.CreateAccessToken(
        chat_pb.CreateAccessTokenRequest(application_id=DEMO_APPLICATION_ID, access_num=50), metadata=operator
    )
    return str(link.access_token)


async def _visitor(chat, access_token: str, returning: str = "") -> chat_pb.AuthenticateVisitorResponse:
    request = chat_pb.AuthenticateVisitorRequest(access_token=access_token, visitor_token=returning)
    reply: chat_pb.AuthenticateVisitorResponse = await chat.access.AuthenticateVisitor(request)
    return reply


async def _asked(chat, who: Metadata, question: str) -> str:
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=who)
    async for _ in chat.answers.Ask(chat_pb.AskRequest(chat_id=opened.chat_id, message=question), metadata=who):
        pass
    return str(opened.chat_id)


async def _listed(chat, who: Metadata, page: int = 1, size: int = 20) -> chat_pb.ListChatsResponse:
    request = chat_pb.ListChatsRequest(application_id=DEMO_APPLICATION_ID, page=page, page_size=size)
    reply: chat_pb.ListChatsResponse = await chat.applications.ListChats(request, metadata=who)
    return reply


async def test_a_visitor_lists_only_their_own_asked_chats_newest_first(chat, operator) -> None:
    link = await _link(chat, operator)
    alice = bearer((await _visitor(chat, link)).token)
    bob = bearer((await _visitor(chat, link)).token)
    first = await _asked(chat, alice, "星澜科技年假有几天？")
    second = await _asked(chat, alice, "图书馆几点开门？")
    await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=alice)
    await _asked(chat, bob, "停车怎么收费？")

    listed = await _listed(chat, alice)
    assert [c.id for c in listed.chats] == [second, first], "newest first; the empty chat and bob's are not listed"
    assert listed.total == 2
    assert listed.chats[1].abstract == "星澜科技年假有几天？" and listed.chats[1].record_count == 1
    paged = await _listed(chat, alice, page=2, size=1)
    assert [c.id for c in paged.chats] == [first] and paged.total == 2


async def test_rename_and_delete_change_only_the_visitors_list(chat, operator) -> None:
    link = await _link(chat, operator)
    alice = bearer((await _visitor(chat, link)).token)
    chat_id = await _asked(chat, alice, "星澜科技年假有几天？")
    renamed = await chat.applications.RenameChat(
        chat_pb.RenameChatRequest(application_id=DEMO_APPLICATION_ID, chat_id=chat_id, abstract="  年假  "),
        metadata=alice,
    )
    assert renamed.abstract == "年假" and renamed.record_count == 1
    assert (await _listed(chat, alice)).chats[0].abstract == "年假"

    deleted = await chat.applications.DeleteChat(
        chat_pb.DeleteChatRequest(application_id=DEMO_APPLICATION_ID, chat_id=chat_id), metadata=alice
    )
    assert deleted.deleted
    assert (await _listed(chat, alice)).total == 0
    for call in (
        chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=chat_id), metadata=alice),
        chat.answers.Ask(chat_pb.AskRequest(chat_id=chat_id, message="还有呢？"), metadata=alice),
        chat.applications.DeleteChat(
            chat_pb.DeleteChatRequest(application_id=DEMO_APPLICATION_ID, chat_id=chat_id), metadata=alice
        ),
    ):
        code, message = await status_of(call)
        assert code == grpc.StatusCode.NOT_FOUND and message == str(NOT_VISIBLE)
    kept = await chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=chat_id), metadata=operator)
    assert kept.total == 1, "the operator's log keeps what was asked"


@pytest.mark.parametrize(
    ("title", "words"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("名" * 201, "at most 200"),
        ("年\x00假", "NUL"),
        ("年\x07假", "control characters"),
    ],
)
async def test_a_bad_title_is_refused_and_nothing_changes(chat, operator, title: str, words: str) -> None:
    link = await _link(chat, operator)
    alice = bearer((await _visitor(chat, link)).token)
    chat_id = await _asked(chat, alice, "图书馆几点开门？")
    code, message = await status_of(
        chat.applications.RenameChat(
            chat_pb.RenameChatRequest(application_id=DEMO_APPLICATION_ID, chat_id=chat_id, abstract=title),
            metadata=alice,
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message
    assert (await _listed(chat, alice)).chats[0].abstract == "图书馆几点开门？"


async def test_another_visitors_chat_cannot_be_renamed_or_deleted(chat, operator) -> None:
    link = await _link(chat, operator)
    alice = bearer((await _visitor(chat, link)).token)
    bob = bearer((await _visitor(chat, link)).token)
    chat_id = await _asked(chat, alice, "图书馆几点开门？")
    for call in (
        chat.applications.RenameChat(
            chat_pb.RenameChatRequest(application_id=DEMO_APPLICATION_ID, chat_id=chat_id, abstract="x"), metadata=bob
        ),
        chat.applications.DeleteChat(
            chat_pb.DeleteChatRequest(application_id=DEMO_APPLICATION_ID, chat_id=chat_id), metadata=bob
        ),
    ):
        code, message = await status_of(call)
        assert code == grpc.StatusCode.NOT_FOUND and message == str(NOT_VISIBLE)
    assert (await _listed(chat, alice)).chats[0].abstract == "图书馆几点开门？"


@pytest.mark.parametrize(("page", "size"), [(0, 10), (1, 0), (1, 101)])
async def test_a_page_out_of_range_is_refused(chat, operator, page: int, size: int) -> None:
    alice = bearer((await _visitor(chat, await _link(chat, operator))).token)
    code, message = await status_of(
        chat.applications.ListChats(
            chat_pb.ListChatsRequest(application_id=DEMO_APPLICATION_ID, page=page, page_size=size), metadata=alice
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "between" in message


async def test_an_api_key_has_no_chat_list(chat, operator) -> None:
    key = await chat.access.CreateApiKey(
        chat_pb.CreateApiKeyRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    code, message = await status_of(
        chat.applications.ListChats(
            chat_pb.ListChatsRequest(application_id=DEMO_APPLICATION_ID, page=1, page_size=10),
            metadata=bearer(key.key),
        )
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED and message == str(NO_CHAT_LIST)


async def test_a_returning_visitor_keeps_their_visitor_and_chats(chat, operator) -> None:
    link = await _link(chat, operator)
    first = await _visitor(chat, link)
    chat_id = await _asked(chat, bearer(first.token), "图书馆几点开门？")
    again = await _visitor(chat, link, returning=first.token)
    assert (again.token, again.visitor_id) == (first.token, first.visitor_id)
    assert [c.id for c in (await _listed(chat, bearer(again.token))).chats] == [chat_id]


async def test_a_token_of_nobody_or_of_another_application_signs_in_a_new_visitor(chat, operator) -> None:
    link = await _link(chat, operator)
    known = await _visitor(chat, link)
    for presented in ("visitor-nobody", "application-abc", ""):
        fresh = await _visitor(chat, link, returning=presented)
        assert fresh.visitor_id != known.visitor_id and fresh.token.startswith("visitor-")
