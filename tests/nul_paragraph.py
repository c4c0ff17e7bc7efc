"""A paragraph that holds a NUL, as data stored before the entry guard existed holds it: put
into the store behind the service's back, in a dataset and an application of its own. Used by
the record save test and by ``make bench`` (the load run with such a paragraph present)."""

from __future__ import annotations

import dataclasses

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from services.retrieval.store.base import ParagraphPoint, VectorStore
from tests.harness import Stack

QUESTION = "青石镇锅炉房每天的巡检时间是几点到几点？"
CLEAN = "青石镇锅炉房巡检规定：锅炉房每天的巡检时间为8:00至8:30，由值班电工负责记录。"
# The same paragraph as old data holds it: NUL characters in its text, title and document name.
WITH_NUL = "青石镇锅炉房巡检规定：锅炉房每天的巡检时间为8:00\x00至8:30，由值班电工负责记录。"


async def dataset_with_a_paragraph(stack: Stack, unique: str) -> tuple[str, str]:
    """A dataset holding one clean paragraph, added through the service; its id and the paragraph's."""
    channel = open_channel(stack.retrieval_target, stack.credential)
    try:
        retrieval = RetrievalStubs.of(channel)
        created = await retrieval.datasets.CreateDataset(
            retrieval_pb.CreateDatasetRequest(name=f"巡检-{unique}"), timeout=30
        )
        dataset_id = created.dataset.id
        paragraphs = retrieval_pb.ParagraphList(paragraphs=[retrieval_pb.ParagraphInput(title="巡检", content=CLEAN)])
        request = retrieval_pb.AddDocumentRequest(dataset_id=dataset_id, name="锅炉房规定", paragraphs=paragraphs)
        document = None
        async for event in retrieval.documents.AddDocument(request, timeout=120):
            if event.HasField("document"):
                document = event.document
        assert document is not None and document.status == retrieval_pb.DOCUMENT_STATUS_READY, document
        listed = await retrieval.paragraphs.ListParagraphs(
            retrieval_pb.ListParagraphsRequest(dataset_id=dataset_id, document_id=document.id, page=1, page_size=10),
            timeout=30,
        )
        return dataset_id, listed.paragraphs[0].id
    finally:
        await channel.close()


async def put_nul_into_the_store(store: VectorStore, paragraph_id: str) -> None:
    """Rewrite the stored paragraph behind the service's back, the way old data holds it."""
    stored = await store.paragraph(paragraph_id)
    assert stored is not None
    vectors = await store.dense_vectors([paragraph_id])
    fields = dataclasses.asdict(stored)
    fields.update(content=WITH_NUL, title="巡\x00检", document_name="锅炉房\x00规定")
    await store.upsert([ParagraphPoint(**fields, vector=vectors[paragraph_id], searchable=True)])


async def application_of(stack: Stack, dataset_id: str, unique: str) -> str:
    channel = open_channel(stack.chat_target, stack.credential)
    try:
        chat = ChatStubs.of(channel)
        application = chat_pb.Application(
            name=f"巡检问答-{unique}",
            dataset_ids=[dataset_id],
            dialogue_number=1,
            search=common_pb2.SearchSettings(top_n=3, search_mode=common_pb2.SEARCH_MODE_HYBRID),
        )
        created = await chat.applications.CreateApplication(
            chat_pb.CreateApplicationRequest(application=application),
            metadata=bearer(operator_token(stack.settings)),
            timeout=30,
        )
        return str(created.application.id)
    finally:
        await channel.close()


async def application_citing_a_nul(stack: Stack, store: VectorStore, unique: str) -> str:
    """An application whose one dataset holds the paragraph with NUL characters; its id."""
    dataset_id, paragraph_id = await dataset_with_a_paragraph(stack, unique)
    await put_nul_into_the_store(store, paragraph_id)
    return await application_of(stack, dataset_id, unique)
