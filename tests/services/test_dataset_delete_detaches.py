"""Deleting a dataset takes it out of every application that used it, in the same transaction:
the delete names the applications it changed, the application then lists only what is left, and
its next question is answered from the remaining dataset; with none left, the question stops
with ``no_datasets``. Never an error (before: ``unknown dataset(s)`` on every question)."""

from __future__ import annotations

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from tests.eventually import eventually

READY = retrieval_pb.DOCUMENT_STATUS_READY
LEAVE = ("年假规定", "员工入职满一年后每年享有五天带薪年假，满十年享有十天，年假须提前三天申请。")
TRAVEL = ("差旅规定", "出差住宿费一线城市每晚不超过六百元，其他城市每晚不超过四百元，超出部分自理。")
QUESTION = "出差住宿费一线城市每晚不超过多少元？"


async def dataset_with_document(retrieval, unique: str, name: str, paragraph: tuple[str, str]) -> str:
    """A dataset holding one ready document of one paragraph."""
    dataset_id = (
        await retrieval.datasets.CreateDataset(retrieval_pb.CreateDatasetRequest(name=f"{name}-{unique}"))
    ).dataset.id
    title, content = paragraph
    reply = await retrieval.documents.SubmitDocuments(
        retrieval_pb.SubmitDocumentsRequest(
            dataset_id=dataset_id,
            name=name,
            paragraphs=retrieval_pb.ParagraphList(
                paragraphs=[retrieval_pb.ParagraphInput(title=title, content=content)]
            ),
        )
    )
    [document] = reply.documents
    request = retrieval_pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document.id)
    ended = await eventually(
        lambda: retrieval.documents.GetDocument(request),
        lambda d: d.status in (READY, retrieval_pb.DOCUMENT_STATUS_FAILED),
        timeout=60,
        interval=0.1,
        what="the document's ingestion",
    )
    assert ended.status == READY, ended
    return str(dataset_id)


async def ask(chat, operator, application_id: str) -> tuple[list[chat_pb.AskResponse], chat_pb.ChatRecord]:
    """Ask QUESTION in a new chat of the application: every event (a failure would raise here,
    as the gateway's ``event:error``) and the record it left."""
    opened = await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=application_id), metadata=operator)
    events = [
        event
        async for event in chat.answers.Ask(
            chat_pb.AskRequest(chat_id=opened.chat_id, message=QUESTION), metadata=operator
        )
    ]
    assert events and events[-1].WhichOneof("event") == "done", events[-3:]
    record = await chat.answers.GetRecord(
        chat_pb.GetRecordRequest(chat_id=opened.chat_id, record_id=events[-1].done.record_id), metadata=operator
    )
    return events, record.record


async def test_deleting_a_dataset_detaches_it_and_the_application_keeps_answering(
    retrieval, chat, operator, unique
) -> None:
    leave = await dataset_with_document(retrieval, unique, "年假", LEAVE)
    travel = await dataset_with_document(retrieval, unique, "差旅", TRAVEL)
    created = await chat.applications.CreateApplication(
        chat_pb.CreateApplicationRequest(
            application=chat_pb.Application(name=f"制度问答-{unique}", dataset_ids=[leave, travel])
        ),
        metadata=operator,
    )
    application_id = created.application.id
    assert list(created.application.dataset_ids) == [leave, travel]

    deleted = await retrieval.datasets.DeleteDataset(retrieval_pb.DeleteDatasetRequest(dataset_id=leave))
    assert [(a.id, a.name) for a in deleted.detached_applications] == [(application_id, f"制度问答-{unique}")]
    got = await chat.applications.GetApplication(
        chat_pb.GetApplicationRequest(application_id=application_id), metadata=operator
    )
    assert list(got.application.dataset_ids) == [travel]

    events, record = await ask(chat, operator, application_id)
    done = events[-1].done
    assert record.status == common_pb2.RECORD_STATUS_ANSWERED and record.error == "", record
    assert record.answer.strip()
    assert done.stop_reason != common_pb2.STOP_REASON_NO_DATASETS
    assert done.sources and {p.dataset_id for p in done.sources} == {travel}, done.sources
    assert any("六百元" in p.content for p in done.sources)

    deleted = await retrieval.datasets.DeleteDataset(retrieval_pb.DeleteDatasetRequest(dataset_id=travel))
    assert [a.id for a in deleted.detached_applications] == [application_id]
    got = await chat.applications.GetApplication(
        chat_pb.GetApplicationRequest(application_id=application_id), metadata=operator
    )
    assert list(got.application.dataset_ids) == []

    events, record = await ask(chat, operator, application_id)
    done = events[-1].done
    assert done.stop_reason == common_pb2.STOP_REASON_NO_DATASETS, done
    assert list(done.sources) == []
    assert record.status == common_pb2.RECORD_STATUS_ANSWERED and record.error == "", record

    # Saving the application again works too (it used to fail on the dangling id).
    saved = await chat.applications.UpdateApplication(
        chat_pb.UpdateApplicationRequest(application=got.application), metadata=operator
    )
    assert list(saved.application.dataset_ids) == []
