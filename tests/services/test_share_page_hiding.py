"""An application that hides sources and the trace from visitors, over gRPC: a share-link
visitor's answer stream ends with no sources and their records carry no paragraphs, quotes,
rounds or per-part verdicts, while the operator asking the same application gets them all."""

from __future__ import annotations

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.rpc.caller_token import bearer
from tools.seed_demo import DEMO_DATASET_ID

Metadata = tuple[tuple[str, str], ...]
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"


async def _hiding_application(chat, operator: Metadata, unique: str) -> str:
    application = chat_pb.Application(
        name=f"hiding-{unique}",
        dataset_ids=[DEMO_DATASET_ID],
        page=chat_pb.PageSetting(hide_sources=True, hide_trace=True),
    )
    made = await chat.applications.CreateApplication(
        chat_pb.CreateApplicationRequest(application=application), metadata=operator
    )
    return str(made.application.id)


async def _ask(chat, app_id: str, who: Metadata) -> tuple[str, chat_pb.AskDone]:
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=app_id), metadata=who)
    done = None
    async for event in chat.answers.Ask(chat_pb.AskRequest(chat_id=opened.chat_id, message=QUESTION), metadata=who):
        if event.WhichOneof("event") == "done":
            done = event.done
    assert done is not None
    return str(opened.chat_id), done


async def test_a_visitor_gets_no_sources_or_trace_where_the_application_hides_them(
    chat, operator: Metadata, unique: str
) -> None:
    app_id = await _hiding_application(chat, operator, unique)
    link = await chat.access.CreateAccessToken(
        chat_pb.CreateAccessTokenRequest(application_id=app_id, access_num=10), metadata=operator
    )
    visitor = bearer(
        (
            await chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=link.access_token))
        ).token
    )

    visitor_chat, visitor_done = await _ask(chat, app_id, visitor)
    _, operator_done = await _ask(chat, app_id, operator)
    assert list(visitor_done.sources) == [] and len(operator_done.sources) > 0

    listed = chat_pb.ListRecordsRequest(chat_id=visitor_chat, application_id=app_id, page=1, page_size=10)
    [seen] = (await chat.answers.ListRecords(listed, metadata=visitor)).records
    [whole] = (await chat.answers.ListRecords(listed, metadata=operator)).records
    shown = await chat.answers.GetRecord(
        chat_pb.GetRecordRequest(chat_id=visitor_chat, record_id=seen.id, application_id=app_id), metadata=visitor
    )
    for record in (seen, shown.record):
        retrieval = record.details.retrieval
        assert "16:00" in record.answer
        assert list(retrieval.paragraphs) == [] and list(retrieval.rounds) == [] and list(retrieval.part_support) == []
        assert not record.details.HasField("context")
        assert retrieval.stop_reason == whole.details.retrieval.stop_reason != 0
    assert whole.details.retrieval.paragraphs and whole.details.retrieval.rounds, "the operator reads it whole"
