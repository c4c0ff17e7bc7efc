"""Who is calling comes from the call's metadata, resolved by the chat service itself: a call
without credentials is refused, and a visitor cannot reach another visitor's chat over gRPC."""

from __future__ import annotations

import asyncio

import grpc

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.rpc.caller_token import bearer
from services.chat.access.rules import NOT_VISIBLE
from tests.grpc_status import status_of
from tools.seed_demo import DEMO_APPLICATION_ID


async def test_every_chat_rpc_without_credentials_is_unauthenticated(chat) -> None:
    calls = [
        chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID)),
        chat.applications.GetApplication(chat_pb.GetApplicationRequest(application_id=DEMO_APPLICATION_ID)),
        chat.applications.ListApplications(chat_pb.ListApplicationsRequest()),
        chat.answers.ExportRecords(chat_pb.ExportRecordsRequest(application_id=DEMO_APPLICATION_ID)),
        chat.answers.Ask(chat_pb.AskRequest(chat_id="x", message="年假")),
    ]
    for call in calls:
        code, message = await status_of(call)
        assert code == grpc.StatusCode.UNAUTHENTICATED and "authorization" in message


async def test_an_unknown_token_is_unauthenticated_and_the_operator_token_works(chat, operator) -> None:
    code, message = await status_of(
        chat.applications.ListApplications(chat_pb.ListApplicationsRequest(), metadata=bearer("nope"))
    )
    assert code == grpc.StatusCode.UNAUTHENTICATED and "unknown" in message
    listed = await chat.applications.ListApplications(chat_pb.ListApplicationsRequest(), metadata=operator)
    assert DEMO_APPLICATION_ID in {a.id for a in listed.applications}


async def test_a_visitor_cannot_read_or_ask_in_another_visitors_chat(chat, operator) -> None:
    link = await chat.access.CreateAccessToken(
        chat_pb.CreateAccessTokenRequest(application_id=DEMO_APPLICATION_ID, access_num=50), metadata=operator
    )
    sign_in = chat_pb.AuthenticateVisitorRequest(access_token=link.access_token)  # needs no credentials
    alice = bearer((await chat.access.AuthenticateVisitor(sign_in)).token)
    bob = bearer((await chat.access.AuthenticateVisitor(sign_in)).token)
    chat_id = (
        await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=alice)
    ).chat_id
    own = await chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=chat_id), metadata=alice)
    assert own.total == 0

    for call in (
        chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=chat_id), metadata=bob),
        chat.answers.GetRecord(chat_pb.GetRecordRequest(chat_id=chat_id, record_id="1"), metadata=bob),
        chat.answers.Stop(chat_pb.StopRequest(chat_id=chat_id), metadata=bob),
        chat.answers.Ask(chat_pb.AskRequest(chat_id=chat_id, message="年假有几天？"), metadata=bob),
    ):
        code, message = await status_of(call)
        assert code == grpc.StatusCode.NOT_FOUND and message == str(NOT_VISIBLE), "D9: one text, no ids to probe"
    code, _ = await status_of(
        chat.answers.ExportRecords(chat_pb.ExportRecordsRequest(application_id=DEMO_APPLICATION_ID), metadata=bob)
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED


async def test_reflection_and_health_need_no_credentials_so_grpcurl_can_describe_the_service(stack) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from kbcore.rpc.client import open_channel

    channel = open_channel(stack.chat_target, stack.credential)
    try:
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        replies = [reply async for reply in reflection.ServerReflectionInfo(iter([request]))]
        names = {s.name for s in replies[0].list_services_response.service}
        assert {"kb.chat.v1.AnswerService", "kb.chat.v1.AccessService"} <= names
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        # Watch streams with ``context.write`` rather than yielding: the entry guard and the
        # caller interceptor must let it through as it is.
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
        first = await asyncio.wait_for(watch.read(), 10)
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        watch.cancel()
    finally:
        await channel.close()
