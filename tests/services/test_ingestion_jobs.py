"""Ingestion as background jobs, through real retrieval servers on their own vector store: an
upload returns queued, a job survives its process stopping mid-way and resumes with one version
of the paragraphs, two workers never process one job twice, a cancel or a failure leaves nothing
searchable, and a search never sees a version that is still being built."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from sqlalchemy import select

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.engine import create_engine, run_read, session_factory
from kbcore.db.tables import IngestJob
from kbcore.rpc.bootstrap import RunningServer
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.ingestion.jobs.queue import JobQueue, Upload
from services.retrieval.server import RetrievalDeps, create_server
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store
from tests.counting_embedder import GatedEmbedder
from tests.eventually import eventually
from tests.fixtures.documents import (
    docx_with_headings_and_table,
    scanned_pdf,
    xlsx_price_list,
    zip_bomb,
    zip_of,
    zip_of_many,
)
from tests.grpc_status import status_of

KEYWORD = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD, top_n=50)
READY, FAILED = pb.DOCUMENT_STATUS_READY, pb.DOCUMENT_STATUS_FAILED


@dataclasses.dataclass
class Node:
    server: RunningServer
    stub: RetrievalStubs
    embedder: GatedEmbedder
    channel: object

    stopped: bool = False

    async def stop(self) -> None:
        """Stop the server and its worker at once, as a crash would (idempotent)."""
        if not self.stopped:
            self.stopped = True
            await self.server.stop(grace=0)
            await self.channel.close()  # type: ignore[attr-defined]


@pytest.fixture
async def own_store(tmp_path: Path) -> AsyncIterator[VectorStore]:
    """A vector store of the test's own: the suite's stack runs a worker too, and workers only
    claim jobs of their own store, so these jobs are processed by the servers started here."""
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=tmp_path / "edge", dimension=384)
    yield store
    await store.close()


@pytest.fixture
async def start_node(settings: Settings, sessions, own_store: VectorStore, embedder: Embedder, offline_model):
    started: list[Node] = []
    quick = dataclasses.replace(settings, ingest_lease_seconds=1.0, ingest_poll_seconds=0.1)

    async def start(pause: float = 0.0, node_sessions=None) -> Node:
        gated = GatedEmbedder(embedder, pause)
        deps = RetrievalDeps(node_sessions or sessions, own_store, gated, offline_model)
        server = await create_server(quick, deps, port=0)
        channel = open_channel(f"127.0.0.1:{server.port}", service_credential(settings))
        node = Node(server, RetrievalStubs.of(channel), gated, channel)
        started.append(node)
        return node

    yield start
    for node in started:
        await node.stop()


def paragraphs_doc(count: int, word: str = "段落") -> pb.ParagraphList:
    return pb.ParagraphList(
        paragraphs=[
            pb.ParagraphInput(title=f"第{i}节", content=f"{word}{i}：这是第{i}条规定的内容。") for i in range(count)
        ]
    )


async def dataset(stub: RetrievalStubs, unique: str) -> str:
    created = await stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"jobs-{unique}"))
    return str(created.dataset.id)


async def wait_for(stub, dataset_id: str, document_id: str, done, timeout: float = 60) -> pb.Document:
    request = pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document_id)
    return await eventually(
        lambda: stub.documents.GetDocument(request),
        done,
        timeout=timeout,
        interval=0.05,
        what="the document's expected state",
    )


def finished(document: pb.Document) -> bool:
    return document.status in (READY, FAILED, pb.DOCUMENT_STATUS_CANCELLED)


async def hits(stub, dataset_id: str, query: str) -> list[str]:
    reply = await stub.search.Search(pb.SearchRequest(dataset_ids=[dataset_id], query=query, search=KEYWORD))
    return [p.content for p in reply.paragraphs]


async def jobs_of(sessions, document_id: str) -> list[IngestJob]:
    return await run_read(
        sessions, lambda s: list(s.scalars(select(IngestJob).where(IngestJob.document_id == document_id)).all())
    )


async def test_upload_returns_queued_and_the_document_becomes_ready(start_node, unique, own_store) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    reply = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="规定", paragraphs=paragraphs_doc(40))
    )
    [queued] = reply.documents
    assert queued.status == pb.DOCUMENT_STATUS_QUEUED and queued.paragraph_count == 0
    ready = await wait_for(node.stub, dataset_id, queued.id, finished)
    assert (ready.status, ready.paragraph_count, ready.error) == (READY, 40, "")
    assert await own_store.count(dataset_id, queued.id) == 40
    assert "段落7：这是第7条规定的内容。" in await hits(node.stub, dataset_id, "段落7")


async def test_a_job_stopped_midway_resumes_in_another_process_with_one_version(
    start_node, unique, own_store, sessions
) -> None:
    first = await start_node(pause=0.05)
    dataset_id = await dataset(first.stub, unique)
    reply = await first.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="长文", paragraphs=paragraphs_doc(96))
    )
    document_id = reply.documents[0].id
    await wait_for(first.stub, dataset_id, document_id, lambda d: d.progress_done >= 32)
    first.embedder.open.clear()  # hold its next batch, then stop the process under it
    await first.stop()
    assert 32 <= await own_store.count(dataset_id, document_id) < 96

    second = await start_node()
    ready = await wait_for(second.stub, dataset_id, document_id, finished)
    assert (ready.status, ready.paragraph_count) == (READY, 96)
    assert await own_store.count(dataset_id, document_id) == 96, "one version, no orphans"
    assert second.embedder.embedded <= 96 - 32, "the second process resumed, it did not start over"
    [job] = await jobs_of(sessions, document_id)
    assert job.attempts == 2 and job.state == "ready"


async def test_a_version_being_built_is_never_searched(start_node, unique, own_store) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    old = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="手册", paragraphs=paragraphs_doc(20, "旧版"))
    )
    document_id = old.documents[0].id
    await wait_for(node.stub, dataset_id, document_id, finished)
    node.embedder.pause = 0.2
    await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="手册", paragraphs=paragraphs_doc(40, "新版"))
    )
    await wait_for(node.stub, dataset_id, document_id, lambda d: d.progress_done >= 16)
    assert await hits(node.stub, dataset_id, "新版") == []
    assert len(await hits(node.stub, dataset_id, "旧版")) == 20
    node.embedder.pause = 0.0
    ready = await wait_for(node.stub, dataset_id, document_id, lambda d: d.status == READY and d.paragraph_count == 40)
    assert ready.paragraph_count == 40
    assert await hits(node.stub, dataset_id, "旧版") == []
    assert len(await hits(node.stub, dataset_id, "新版")) == 40
    assert await own_store.count(dataset_id, document_id) == 40


async def test_two_workers_on_one_queue_process_every_job_once(
    start_node, unique, own_store, sessions, database_url
) -> None:
    engine = create_engine(database_url)  # the second process's own connections
    first = await start_node()
    second = await start_node(node_sessions=session_factory(engine))
    dataset_id = await dataset(first.stub, unique)
    submitted = [
        (
            await (first if i % 2 else second).stub.documents.SubmitDocuments(
                pb.SubmitDocumentsRequest(
                    dataset_id=dataset_id, name=f"文档{i}", paragraphs=paragraphs_doc(6, f"文档{i}段")
                )
            )
        )
        .documents[0]
        .id
        for i in range(20)
    ]
    for document_id in submitted:
        ready = await wait_for(first.stub, dataset_id, document_id, finished)
        assert ready.status == READY
    assert await own_store.count(dataset_id) == 20 * 6, "no duplicate points"
    assert first.embedder.embedded + second.embedder.embedded == 20 * 6, "no document embedded twice"
    for document_id in submitted:
        [job] = await jobs_of(sessions, document_id)
        assert job.attempts == 1, "claimed once"
    await second.stop()  # before its connections go
    await engine.dispose()


async def test_cancel_drops_the_new_version_and_keeps_the_served_one(start_node, unique, own_store) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    fresh = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="新文档", paragraphs=paragraphs_doc(64))
    )
    new_id = fresh.documents[0].id
    await wait_for(node.stub, dataset_id, new_id, lambda d: d.progress_done >= 16)
    node.embedder.open.clear()
    await node.stub.documents.CancelIngestion(pb.CancelIngestionRequest(dataset_id=dataset_id, document_id=new_id))
    node.embedder.open.set()
    cancelled = await wait_for(node.stub, dataset_id, new_id, finished)
    assert cancelled.status == pb.DOCUMENT_STATUS_CANCELLED and "cancel" in cancelled.error
    assert await own_store.count(dataset_id, new_id) == 0

    served = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="旧文档", paragraphs=paragraphs_doc(8, "旧"))
    )
    served_id = served.documents[0].id
    await wait_for(node.stub, dataset_id, served_id, finished)
    node.embedder.open.clear()
    await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="旧文档", paragraphs=paragraphs_doc(30, "新"))
    )
    await node.stub.documents.CancelIngestion(pb.CancelIngestionRequest(dataset_id=dataset_id, document_id=served_id))
    node.embedder.open.set()
    kept = await wait_for(node.stub, dataset_id, served_id, finished)
    assert (kept.status, kept.paragraph_count, kept.error) == (READY, 8, "")
    assert await own_store.count(dataset_id, served_id) == 8
    assert len(await hits(node.stub, dataset_id, "旧")) == 8


async def test_a_document_that_cannot_be_parsed_fails_with_its_reason(start_node, unique, own_store) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    reply = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=pb.FileContent(filename="扫描件.pdf", data=scanned_pdf()))
    )
    failed = await wait_for(node.stub, dataset_id, reply.documents[0].id, finished)
    assert failed.status == FAILED and "text layer" in failed.error, failed
    assert "Traceback" not in failed.error
    assert await own_store.count(dataset_id, reply.documents[0].id) == 0


async def test_deleting_a_document_while_it_is_embedded_leaves_no_points(start_node, unique, own_store) -> None:
    node = await start_node(pause=0.05)
    dataset_id = await dataset(node.stub, unique)
    reply = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="删", paragraphs=paragraphs_doc(96))
    )
    document_id = reply.documents[0].id
    await wait_for(node.stub, dataset_id, document_id, lambda d: d.progress_done >= 16)
    await node.stub.documents.DeleteDocument(pb.DeleteDocumentRequest(dataset_id=dataset_id, document_id=document_id))
    # The worker's next report (a third of a second) finds the job gone and drops what it wrote,
    # after the batch under way; meanwhile another slot takes the next upload.
    after = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="后", paragraphs=paragraphs_doc(1))
    )
    assert (await wait_for(node.stub, dataset_id, after.documents[0].id, finished)).status == READY
    await eventually(
        lambda: own_store.count(dataset_id, document_id), lambda n: n == 0, timeout=10, what="the points dropped"
    )
    await asyncio.sleep(1)  # a report and a batch later: nothing was written after the drop
    assert await own_store.count(dataset_id, document_id) == 0


async def test_a_zip_becomes_one_document_per_supported_file_and_a_bomb_is_refused(
    start_node, unique, own_store, sessions
) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    archive = zip_of(
        {
            "制度/考勤.md": "# 考勤制度\n\n上班时间为九点。".encode(),
            "价格表.xlsx": xlsx_price_list(),
            "说明.docx": docx_with_headings_and_table(),
            "logo.png": b"\x89PNG\r\n\x1a\n",
        }
    )
    reply = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=pb.FileContent(filename="资料.zip", data=archive))
    )
    assert sorted(d.name for d in reply.documents) == ["价格表", "制度/考勤", "说明"]
    assert {d.source_type for d in reply.documents} == {"md", "xlsx", "docx"}
    for document in reply.documents:
        assert (await wait_for(node.stub, dataset_id, document.id, finished)).status == READY
    assert "1280元" in " ".join(await hits(node.stub, dataset_id, "星澜净水器"))

    before = await node.stub.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset_id))
    for bomb in (zip_bomb(), zip_of_many(500)):
        code, message = await status_of(
            node.stub.documents.SubmitDocuments(
                pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=pb.FileContent(filename="炸弹.zip", data=bomb))
            )
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT and message, message
    after = await node.stub.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset_id))
    assert len(after.documents) == len(before.documents), "a refused archive queues nothing"


async def test_a_job_left_for_another_store_does_not_block_the_document(start_node, unique, sessions) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    elsewhere = JobQueue(sessions, 30.0, "edge:a-store-no-process-uses")
    orphan = await elsewhere.submit(dataset_id, Upload("手册", "手册.md", "md", "# 手册\n\n旧的内容。".encode()))
    reply = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="手册", paragraphs=paragraphs_doc(3))
    )
    assert reply.documents[0].id == orphan.id
    assert (await wait_for(node.stub, dataset_id, orphan.id, finished)).status == READY
    states = sorted(job.state for job in await jobs_of(sessions, orphan.id))
    assert states == ["failed", "ready"], "the stranded job was ended as superseded"


def edited(paragraphs: pb.ParagraphList) -> pb.ParagraphList:
    """The document's next version: a paragraph inserted first, two rewritten, the rest as they were."""
    changed = [pb.ParagraphInput(title="前言", content="新增：本规定自发布之日起施行。")]
    for i, paragraph in enumerate(paragraphs.paragraphs):
        content = f"第{i}条已修订：改为书面申请。" if i in (5, 30) else paragraph.content
        changed.append(pb.ParagraphInput(title=paragraph.title, content=content))
    return pb.ParagraphList(paragraphs=changed)


async def test_a_changed_upload_embeds_only_its_changed_paragraphs(start_node, unique, own_store) -> None:
    node = await start_node()
    dataset_id = await dataset(node.stub, unique)
    first = paragraphs_doc(40)
    reply = await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="规程", paragraphs=first)
    )
    document_id = reply.documents[0].id
    await wait_for(node.stub, dataset_id, document_id, finished)
    before = {p.content: p.id for p in await own_store.served_paragraphs(dataset_id, document_id)}
    embedded = node.embedder.embedded

    await node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="规程", paragraphs=edited(first))
    )
    ready = await wait_for(node.stub, dataset_id, document_id, lambda d: finished(d) and d.paragraph_count == 41)
    assert ready.status == READY
    assert node.embedder.embedded - embedded == 3, "the inserted and the two rewritten paragraphs, nothing else"
    after = await own_store.served_paragraphs(dataset_id, document_id)
    assert [p.content for p in after] == [p.content for p in edited(first).paragraphs]
    assert [p.position for p in after] == list(range(41))
    kept = [p for p in after if p.content in before]
    assert len(kept) == 38 and all(p.id == before[p.content] for p in kept), "unchanged paragraphs keep their ids"
    assert await own_store.count(dataset_id, document_id) == 41, "one version, no orphans"
    assert "段落5：这是第5条规定的内容。" not in await hits(node.stub, dataset_id, "段落5")
    assert sorted(await hits(node.stub, dataset_id, "已修订")) == [
        "第30条已修订：改为书面申请。",
        "第5条已修订：改为书面申请。",
    ]


class FailingPublication:
    """The node's store, whose next ``failures`` publications report an error: ``after`` the
    publication went through (a server whose acknowledgement is lost) or before it began (a
    server that is away)."""

    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner
        self.failures = 0
        self.after = True

    async def publish_version(self, *args: Any, **kwargs: Any) -> None:
        if self.failures and not self.after:
            self.failures -= 1
            raise ConnectionError("the vector store is away")
        await self._inner.publish_version(*args, **kwargs)
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the acknowledgement was lost")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
async def failing_node(settings, sessions, own_store, embedder, offline_model):
    """A retrieval server on ``own_store`` whose publications can be made to fail, and its store."""
    quick = dataclasses.replace(settings, ingest_lease_seconds=1.0, ingest_poll_seconds=0.1)
    store = FailingPublication(own_store)
    server = await create_server(
        quick, RetrievalDeps(sessions, cast(VectorStore, store), embedder, offline_model), port=0
    )
    channel = open_channel(f"127.0.0.1:{server.port}", service_credential(settings))
    yield RetrievalStubs.of(channel), store
    await server.stop(grace=0)
    await channel.close()


async def served_then_edited(stub: RetrievalStubs, unique: str) -> tuple[str, str, pb.ParagraphList]:
    """A dataset with a served 40-paragraph document, and that document's next version."""
    dataset_id = await dataset(stub, unique)
    first = paragraphs_doc(40)
    reply = await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="规程", paragraphs=first)
    )
    document_id = reply.documents[0].id
    await wait_for(stub, dataset_id, document_id, finished)
    return dataset_id, document_id, edited(first)


async def test_a_lost_acknowledgement_of_the_publication_costs_nothing(failing_node, own_store, unique) -> None:
    stub, store = failing_node
    dataset_id, document_id, second = await served_then_edited(stub, unique)
    store.failures, store.after = 1, True
    await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="规程", paragraphs=second)
    )
    ready = await wait_for(stub, dataset_id, document_id, lambda d: finished(d) and d.paragraph_count == 41)
    assert (ready.status, ready.error) == (READY, "")
    assert [p.content for p in await own_store.served_paragraphs(dataset_id, document_id)] == [
        p.content for p in second.paragraphs
    ]
    assert await own_store.count(dataset_id, document_id) == 41


async def test_a_publication_that_keeps_failing_leaves_the_served_version_whole(
    failing_node, own_store, unique
) -> None:
    stub, store = failing_node
    dataset_id, document_id, second = await served_then_edited(stub, unique)
    before = await own_store.served_paragraphs(dataset_id, document_id)
    store.failures, store.after = 2, False
    await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="规程", paragraphs=second)
    )
    failed = await wait_for(stub, dataset_id, document_id, lambda d: d.status == FAILED)
    assert failed.paragraph_count == 40 and "previous version is still searchable" in failed.error
    assert await own_store.served_paragraphs(dataset_id, document_id) == before
    assert await own_store.count(dataset_id, document_id) == 40, "the new version's own points dropped"
    assert await hits(stub, dataset_id, "已修订") == []
    assert len(await hits(stub, dataset_id, "段落")) == 40
