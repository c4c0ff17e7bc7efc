"""Paragraphs an operator manages through the retrieval service: listed page by page, edited
(and searched by their new words at once), disabled (never retrieved) and enabled again,
deleted, added by hand; refused while the document is being ingested; bad requests refused."""

from __future__ import annotations

from typing import Any

import grpc

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from tests.grpc_status import status_of

KEYWORD = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD, top_n=20)
MANUAL = pb.ParagraphList(
    paragraphs=[
        pb.ParagraphInput(title="开机", content="长按电源键三秒钟，指示灯变为蓝色即开机完成。"),
        pb.ParagraphInput(title="充电", content="使用原装适配器充电，充满约需四小时。"),
        pb.ParagraphInput(title="保修", content="整机保修一年，电池保修六个月。"),
    ]
)


async def ready_document(retrieval, unique: str) -> tuple[str, str]:
    dataset = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"para-{unique}"))).dataset
    request = pb.AddDocumentRequest(dataset_id=dataset.id, name="手册", paragraphs=MANUAL)
    [document] = [e.document async for e in retrieval.documents.AddDocument(request) if e.HasField("document")]
    return dataset.id, document.id


async def found(retrieval, dataset_id: str, query: str) -> list[str]:
    reply = await retrieval.search.Search(pb.SearchRequest(dataset_ids=[dataset_id], query=query, search=KEYWORD))
    return [p.content for p in reply.paragraphs]


async def listed(
    retrieval, dataset_id: str, document_id: str, page: int = 1, size: int = 50
) -> pb.ListParagraphsResponse:
    reply: pb.ListParagraphsResponse = await retrieval.paragraphs.ListParagraphs(
        pb.ListParagraphsRequest(dataset_id=dataset_id, document_id=document_id, page=page, page_size=size)
    )
    return reply


async def test_paragraphs_are_listed_edited_disabled_deleted_and_added(retrieval, unique: str) -> None:
    dataset_id, document_id = await ready_document(retrieval, unique)
    first_page = await listed(retrieval, dataset_id, document_id, page=1, size=2)
    second_page = await listed(retrieval, dataset_id, document_id, page=2, size=2)
    assert first_page.total == 3 and [p.title for p in first_page.paragraphs] == ["开机", "充电"]
    assert [p.title for p in second_page.paragraphs] == ["保修"]
    power, charge, warranty = [*first_page.paragraphs, *second_page.paragraphs]

    edited = await retrieval.paragraphs.UpdateParagraph(
        pb.UpdateParagraphRequest(
            dataset_id=dataset_id, document_id=document_id, paragraph_id=power.id, content="长按电源键五秒钟开机。"
        )
    )
    assert (edited.id, edited.title, edited.content, edited.enabled) == (
        power.id,
        "开机",
        "长按电源键五秒钟开机。",
        True,
    )
    assert await found(retrieval, dataset_id, "五秒钟") == ["长按电源键五秒钟开机。"]
    assert await found(retrieval, dataset_id, "蓝色指示灯") == [], "the old words are gone"

    await retrieval.paragraphs.UpdateParagraph(
        pb.UpdateParagraphRequest(dataset_id=dataset_id, document_id=document_id, paragraph_id=charge.id, enabled=False)
    )
    assert await found(retrieval, dataset_id, "适配器") == [], "a disabled paragraph is never retrieved"
    still = await listed(retrieval, dataset_id, document_id)
    assert [(p.title, p.enabled) for p in still.paragraphs] == [("开机", True), ("充电", False), ("保修", True)]
    await retrieval.paragraphs.UpdateParagraph(
        pb.UpdateParagraphRequest(dataset_id=dataset_id, document_id=document_id, paragraph_id=charge.id, enabled=True)
    )
    assert await found(retrieval, dataset_id, "适配器") == [charge.content]

    await retrieval.paragraphs.DeleteParagraph(
        pb.DeleteParagraphRequest(dataset_id=dataset_id, document_id=document_id, paragraph_id=warranty.id)
    )
    assert await found(retrieval, dataset_id, "保修") == []
    added = await retrieval.paragraphs.AddParagraph(
        pb.AddParagraphRequest(
            dataset_id=dataset_id, document_id=document_id, title="售后", content="售后电话400-800-1234。"
        )
    )
    assert added.position == charge.position + 1 and added.enabled, "after the last one left"
    assert await found(retrieval, dataset_id, "售后电话") == ["售后电话400-800-1234。"]
    document = await retrieval.documents.GetDocument(
        pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document_id)
    )
    assert document.paragraph_count == 3, "one deleted, one added"


async def test_a_disabled_paragraph_stays_disabled_when_its_text_is_edited(retrieval, unique: str) -> None:
    dataset_id, document_id = await ready_document(retrieval, unique)
    charge = (await listed(retrieval, dataset_id, document_id)).paragraphs[1]
    ids: dict[str, Any] = {"dataset_id": dataset_id, "document_id": document_id, "paragraph_id": charge.id}
    await retrieval.paragraphs.UpdateParagraph(pb.UpdateParagraphRequest(**ids, enabled=False))
    edited = await retrieval.paragraphs.UpdateParagraph(pb.UpdateParagraphRequest(**ids, title="充电须知"))
    assert (edited.title, edited.enabled) == ("充电须知", False)
    assert await found(retrieval, dataset_id, "适配器") == []


async def test_bad_paragraph_requests_are_refused_and_change_nothing(retrieval, unique: str) -> None:
    dataset_id, document_id = await ready_document(retrieval, unique)
    paragraph = (await listed(retrieval, dataset_id, document_id)).paragraphs[0]
    for page, size in ((0, 10), (1, 0), (1, 1_000_000)):
        code, _ = await status_of(listed(retrieval, dataset_id, document_id, page, size))
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (page, size)
    ids: dict[str, Any] = {"dataset_id": dataset_id, "document_id": document_id}
    changes: list[dict[str, Any]] = [{"content": "   "}, {"content": "长" * 5000}, {"title": "题" * 300}]
    for change in changes:
        code, message = await status_of(
            retrieval.paragraphs.UpdateParagraph(pb.UpdateParagraphRequest(**ids, paragraph_id=paragraph.id, **change))
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "paragraph" in message
    code, _ = await status_of(retrieval.paragraphs.AddParagraph(pb.AddParagraphRequest(**ids, title="空", content="")))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    for missing in ("not-a-uuid", "00000000-0000-4000-8000-000000000000"):
        code, _ = await status_of(
            retrieval.paragraphs.DeleteParagraph(pb.DeleteParagraphRequest(**ids, paragraph_id=missing))
        )
        assert code == grpc.StatusCode.NOT_FOUND
    other_dataset, other_document = await ready_document(retrieval, unique + "b")
    code, _ = await status_of(
        retrieval.paragraphs.DeleteParagraph(
            pb.DeleteParagraphRequest(dataset_id=other_dataset, document_id=other_document, paragraph_id=paragraph.id)
        )
    )
    assert code == grpc.StatusCode.NOT_FOUND, "a paragraph of another document"
    after = await listed(retrieval, dataset_id, document_id)
    assert [(p.title, p.content) for p in after.paragraphs] == [(p.title, p.content) for p in MANUAL.paragraphs]


async def test_paragraphs_cannot_change_while_the_document_is_ingested(retrieval, unique: str) -> None:
    dataset_id, document_id = await ready_document(retrieval, unique)
    big = pb.ParagraphList(paragraphs=[pb.ParagraphInput(title="条", content=f"第{i}条内容。") for i in range(200)])
    await retrieval.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="手册", paragraphs=big)
    )
    code, message = await status_of(
        retrieval.paragraphs.AddParagraph(
            pb.AddParagraphRequest(dataset_id=dataset_id, document_id=document_id, content="新增")
        )
    )
    assert code == grpc.StatusCode.ABORTED and "being ingested" in message
    await retrieval.documents.CancelIngestion(pb.CancelIngestionRequest(dataset_id=dataset_id, document_id=document_id))
