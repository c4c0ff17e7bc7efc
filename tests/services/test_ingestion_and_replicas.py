"""Ingestion through the gRPC service (progress, idempotence, replacement, deletion), and two
stateless retrieval replicas serving one client through a round-robin channel."""

from __future__ import annotations

from collections.abc import Sequence

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import RetrievalStubs
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.server import RetrievalDeps, create_server
from tests.harness import Stack

KEYWORD = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD, top_n=10)
MANUAL_V1 = "# 测试手册\n\n一、开机\n\n长按电源键三秒钟，指示灯变为蓝色即开机完成。\n\n二、充电\n\n使用原装适配器充电，充满约需四小时。"
MANUAL_V2 = "# 测试手册\n\n一、开机\n\n长按电源键五秒钟，指示灯变为绿色即开机完成。"


async def add(stub: RetrievalStubs, dataset_id: str, text: str) -> tuple[list[tuple[int, int]], pb.Document]:
    progress: list[tuple[int, int]] = []
    document = None
    request = pb.AddDocumentRequest(
        dataset_id=dataset_id, file=pb.FileContent(filename="manual.md", data=text.encode())
    )
    async for event in stub.documents.AddDocument(request):
        if event.HasField("progress"):
            progress.append((event.progress.embedded, event.progress.total))
        else:
            document = event.document
    assert document is not None
    return progress, document


async def keyword_hits(stub: RetrievalStubs, dataset_id: str, query: str) -> list[str]:
    reply = await stub.search.Search(pb.SearchRequest(dataset_ids=[dataset_id], query=query, search=KEYWORD))
    return [p.content for p in reply.paragraphs]


async def test_ingestion_streams_progress_and_readding_changes_nothing(retrieval, unique: str) -> None:
    dataset = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"ingest-{unique}"))).dataset
    progress, document = await add(retrieval, dataset.id, MANUAL_V1)
    assert progress[0][0] == 0 and progress[-1] == (2, 2)
    assert [e for e, _ in progress] == sorted(e for e, _ in progress)
    assert (document.name, document.paragraph_count) == ("测试手册", 2)

    _, again = await add(retrieval, dataset.id, MANUAL_V1)
    assert again.id == document.id
    listed = await retrieval.datasets.ListDatasets(pb.ListDatasetsRequest())
    mine = next(d for d in listed.datasets if d.id == dataset.id)
    assert (mine.document_count, mine.paragraph_count) == (1, 2)
    assert len(await keyword_hits(retrieval, dataset.id, "电源键")) == 1, "no duplicate paragraphs"


async def test_changed_document_replaces_its_paragraphs_and_delete_removes_them(retrieval, unique: str) -> None:
    dataset = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"replace-{unique}"))).dataset
    _, first = await add(retrieval, dataset.id, MANUAL_V1)
    _, second = await add(retrieval, dataset.id, MANUAL_V2)
    assert second.id == first.id and second.paragraph_count == 1
    assert await keyword_hits(retrieval, dataset.id, "电源键") == ["长按电源键五秒钟，指示灯变为绿色即开机完成。"]
    assert await keyword_hits(retrieval, dataset.id, "适配器") == [], "the old version's paragraphs are gone"

    await retrieval.documents.DeleteDocument(pb.DeleteDocumentRequest(dataset_id=dataset.id, document_id=second.id))
    assert await keyword_hits(retrieval, dataset.id, "电源键") == []
    documents = await retrieval.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset.id))
    assert list(documents.documents) == []


class CountingEmbedder:
    """The real embedder, counting the queries one replica embedded."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.queries = 0

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.inner.embed_passages(texts)

    async def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return await self.inner.embed_query(text)

    async def close(self) -> None:
        return None


async def test_two_replicas_behind_one_round_robin_channel_share_the_work(
    stack: Stack, sessions, store, embedder, offline_model
) -> None:
    from tools.seed_demo import DEMO_DATASET_ID

    counters = [CountingEmbedder(embedder), CountingEmbedder(embedder)]
    replicas = [
        await create_server(stack.settings, RetrievalDeps(sessions, store, counter, offline_model), port=0)
        for counter in counters
    ]
    channel = open_channel("ipv4:" + ",".join(f"127.0.0.1:{r.port}" for r in replicas), stack.credential)
    try:
        stub = RetrievalStubs.of(channel)
        vector = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_VECTOR, top_n=3)
        for i in range(8):
            reply = await stub.search.Search(
                pb.SearchRequest(dataset_ids=[DEMO_DATASET_ID], query=f"年休假有几天 {i}", search=vector)
            )
            assert reply.paragraphs
        # Both subchannels need not be ready for the very first call, so "evenly" is not exact.
        assert sum(c.queries for c in counters) == 8
        assert min(c.queries for c in counters) >= 2, (
            f"round-robin must use both replicas: {[c.queries for c in counters]}"
        )
    finally:
        await channel.close()
        for replica in replicas:
            await replica.stop(grace=1)
