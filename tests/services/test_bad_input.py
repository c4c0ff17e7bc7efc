"""Every gRPC entry point refuses bad input with the right status and a readable message,
and leaves nothing half-written behind."""

from __future__ import annotations

import grpc

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.context.v1 import context_service_pb2 as context_pb
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.rpc.caller_token import bearer
from tests.grpc_status import status_of
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

UNKNOWN = "00000000-0000-0000-0000-000000000000"


async def test_search_refuses_empty_long_and_unknown(retrieval) -> None:
    def search(query: str, datasets: list[str], **settings) -> object:
        return retrieval.search.Search(
            retrieval_pb.SearchRequest(dataset_ids=datasets, query=query, search=common_pb2.SearchSettings(**settings))
        )

    assert await status_of(search("  ", [DEMO_DATASET_ID])) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "query must not be empty",
    )
    code, message = await status_of(search("年" * 1001, [DEMO_DATASET_ID]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "longer than 1000" in message
    code, message = await status_of(search("年假", [UNKNOWN]))
    assert code == grpc.StatusCode.NOT_FOUND and UNKNOWN in message
    code, message = await status_of(search("年假", []))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "dataset" in message
    code, message = await status_of(search("年假", [DEMO_DATASET_ID], top_n=500))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "top_n" in message
    code, message = await status_of(search("年假", [DEMO_DATASET_ID], similarity=1.5))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "similarity" in message


async def test_retrieve_refuses_empty_and_unknown(retrieval) -> None:
    code, message = await status_of(
        retrieval.search.Retrieve(retrieval_pb.RetrieveRequest(question="", dataset_ids=[DEMO_DATASET_ID]))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "question" in message
    code, message = await status_of(
        retrieval.search.Retrieve(retrieval_pb.RetrieveRequest(question="年假", dataset_ids=[UNKNOWN]))
    )
    assert code == grpc.StatusCode.NOT_FOUND
    code, message = await status_of(
        retrieval.search.Retrieve(retrieval_pb.RetrieveRequest(question="年" * 9000, dataset_ids=[DEMO_DATASET_ID]))
    )
    assert code == grpc.StatusCode.OUT_OF_RANGE and "4000" in message  # TooLong, as Ask says it


async def test_bad_documents_are_refused_and_nothing_is_half_ingested(retrieval, unique: str) -> None:
    dataset = (await retrieval.datasets.CreateDataset(retrieval_pb.CreateDatasetRequest(name=f"bad-{unique}"))).dataset

    def add(**source) -> object:
        return retrieval.documents.AddDocument(retrieval_pb.AddDocumentRequest(dataset_id=dataset.id, **source))

    code, message = await status_of(add(file=retrieval_pb.FileContent(filename="report.exe", data=b"MZ\x90")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "supported types" in message
    code, message = await status_of(add(file=retrieval_pb.FileContent(filename="report.pdf", data=b"%PDF-1.7")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "damaged" in message
    code, message = await status_of(
        add(file=retrieval_pb.FileContent(filename="gbk.txt", data="年假规定".encode("gbk")))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "UTF-8" in message
    code, message = await status_of(add(file=retrieval_pb.FileContent(filename="empty.md", data=b"\n\n  \n")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "empty" in message
    code, message = await status_of(add(name="x", paragraphs=retrieval_pb.ParagraphList()))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await status_of(add())
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    documents = await retrieval.documents.ListDocuments(retrieval_pb.ListDocumentsRequest(dataset_id=dataset.id))
    # Files refused only once parsed stay listed as failed, with their reason and no paragraph.
    assert all(
        (d.status, d.paragraph_count) == (retrieval_pb.DOCUMENT_STATUS_FAILED, 0) and d.error
        for d in documents.documents
    )
    hits = await retrieval.search.Search(
        retrieval_pb.SearchRequest(
            dataset_ids=[dataset.id],
            query="年假规定",
            search=common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD),
        )
    )
    assert list(hits.paragraphs) == []
    code, _ = await status_of(
        retrieval.documents.AddDocument(
            retrieval_pb.AddDocumentRequest(
                dataset_id=UNKNOWN, file=retrieval_pb.FileContent(filename="a.md", data=b"text")
            )
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = await status_of(
        retrieval.documents.DeleteDocument(
            retrieval_pb.DeleteDocumentRequest(dataset_id=dataset.id, document_id=UNKNOWN)
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = await status_of(retrieval.datasets.CreateDataset(retrieval_pb.CreateDatasetRequest(name="   ")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await status_of(retrieval.datasets.DeleteDataset(retrieval_pb.DeleteDatasetRequest(dataset_id=UNKNOWN)))
    assert code == grpc.StatusCode.NOT_FOUND


async def test_load_context_refuses_unknown_and_malformed(context) -> None:
    code, message = await status_of(context.LoadContext(context_pb.LoadContextRequest(chat_id=UNKNOWN)))
    assert code == grpc.StatusCode.NOT_FOUND and UNKNOWN in message
    code, _ = await status_of(context.LoadContext(context_pb.LoadContextRequest(chat_id="")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    code, _ = await status_of(context.LoadContext(context_pb.LoadContextRequest(chat_id=UNKNOWN, before_record_id=-1)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


async def test_chat_entry_points_refuse_bad_input(chat, operator) -> None:
    chat_id = (
        await chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=DEMO_APPLICATION_ID), metadata=operator)
    ).chat_id

    def ask(message: str, metadata: tuple[tuple[str, str], ...] = operator, target: str = chat_id) -> object:
        return chat.answers.Ask(chat_pb.AskRequest(chat_id=target, message=message), metadata=metadata)

    assert (await status_of(ask("   ")))[0] == grpc.StatusCode.INVALID_ARGUMENT
    code, message = await status_of(ask("问" * 9000))
    assert code == grpc.StatusCode.OUT_OF_RANGE and "4000" in message
    assert (await status_of(ask("年假", target=UNKNOWN)))[0] == grpc.StatusCode.NOT_FOUND
    assert (await status_of(ask("年假", metadata=())))[0] == grpc.StatusCode.UNAUTHENTICATED
    code, message = await status_of(
        chat.answers.GetRecord(chat_pb.GetRecordRequest(chat_id=chat_id, record_id="abc"), metadata=operator)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "record_id" in message
    code, _ = await status_of(
        chat.answers.GetRecord(chat_pb.GetRecordRequest(chat_id=chat_id, record_id="999999"), metadata=operator)
    )
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = await status_of(
        chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=chat_id, page_size=1000), metadata=operator)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    records = await chat.answers.ListRecords(chat_pb.ListRecordsRequest(chat_id=chat_id), metadata=operator)
    assert records.total == 0, "a refused question must leave no record"


async def test_application_admin_refuses_bad_input(chat, operator, stack) -> None:
    def create(**fields) -> object:
        return chat.applications.CreateApplication(
            chat_pb.CreateApplicationRequest(application=chat_pb.Application(**fields)), metadata=operator
        )

    assert (await status_of(create(name="")))[0] == grpc.StatusCode.INVALID_ARGUMENT
    code, message = await status_of(create(name="x", dataset_ids=[UNKNOWN]))
    assert code == grpc.StatusCode.NOT_FOUND and UNKNOWN in message
    code, message = await status_of(create(name="x", search=common_pb2.SearchSettings(top_n=1000)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "top_n" in message
    key = await chat.access.CreateApiKey(
        chat_pb.CreateApiKeyRequest(application_id=DEMO_APPLICATION_ID), metadata=operator
    )
    code, _ = await status_of(
        chat.applications.CreateApplication(
            chat_pb.CreateApplicationRequest(application=chat_pb.Application(name="x")), metadata=bearer(key.key)
        )
    )
    assert code == grpc.StatusCode.PERMISSION_DENIED
    code, _ = await status_of(
        chat.applications.OpenChat(chat_pb.OpenChatRequest(application_id=UNKNOWN), metadata=operator)
    )
    assert code == grpc.StatusCode.NOT_FOUND
    code, _ = await status_of(
        chat.applications.UpdateApplication(
            chat_pb.UpdateApplicationRequest(application=chat_pb.Application(id=UNKNOWN, name="x")), metadata=operator
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND
