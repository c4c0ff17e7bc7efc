"""Ingestion with a remote embeddings endpoint, through a real retrieval server and the
real ``openai`` client against a fake endpoint of fixed capacity: batches are sent several at a
time but never more than the setting, every paragraph lands once, at its position, with its own
vector, while the progress only moves forward; a batch the endpoint refuses is retried by the
client with backoff, and one it keeps refusing fails the job with the endpoint's answer."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.engine import run_read
from kbcore.db.tables import Document
from kbcore.models.failures import SENTENCES, FailureKind
from kbcore.refusals.status_details import from_proto
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import OpenAIEmbedder
from services.retrieval.server import RetrievalDeps, create_server
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store
from services.retrieval.store.layout import indexed_text
from tests.eventually import eventually
from tests.fakes.embeddings_endpoint import Capacity, EmbeddingsEndpoint, FakeEmbeddings

# The endpoint could take 8 requests at once: what limits the client is its own setting.
CAPACITY = Capacity(latency=0.1, slots=8, max_batch=32)
BATCH, CONCURRENCY, RETRIES = 16, 3, 2
PARAGRAPHS = 300
NAME = "远程规定"
MARKER = "故障段落"
RUNNING = (pb.DOCUMENT_STATUS_QUEUED, pb.DOCUMENT_STATUS_PARSING, pb.DOCUMENT_STATUS_EMBEDDING)


@dataclasses.dataclass
class Node:
    stub: RetrievalStubs
    store: VectorStore
    endpoint: EmbeddingsEndpoint


@pytest.fixture(scope="module")
def fake_endpoint() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings(CAPACITY) as fake:
        yield fake


@pytest.fixture
async def node(
    settings: Settings, sessions, offline_model, tmp_path: Path, fake_endpoint: FakeEmbeddings
) -> AsyncIterator[Node]:
    """A retrieval server on a vector store of its own (so only its worker claims these jobs)."""
    fake_endpoint.endpoint.reset()
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=tmp_path / "edge", dimension=384)
    embedder = OpenAIEmbedder(
        base_url=fake_endpoint.base_url,
        api_key="test-key",
        model="fake-embedding",
        dimension=384,
        timeout=10,
        max_retries=RETRIES,
        batch_size=BATCH,
        concurrency=CONCURRENCY,
    )
    quick = dataclasses.replace(settings, ingest_lease_seconds=1.0, ingest_poll_seconds=0.1)
    server = await create_server(quick, RetrievalDeps(sessions, store, embedder, offline_model), port=0)
    channel = open_channel(f"127.0.0.1:{server.port}", service_credential(settings))
    yield Node(RetrievalStubs.of(channel), store, fake_endpoint.endpoint)
    await server.stop(grace=0)
    await channel.close()
    await embedder.close()
    await store.close()


def paragraphs(marked: int | None = None) -> pb.ParagraphList:
    """``PARAGRAPHS`` distinct paragraphs; the one at ``marked`` carries ``MARKER``."""
    return pb.ParagraphList(
        paragraphs=[
            pb.ParagraphInput(title=f"第{i}节", content=f"{MARKER if i == marked else '条款'}{i}：第{i}条的内容。")
            for i in range(PARAGRAPHS)
        ]
    )


async def submit_and_follow(node: Node, unique: str, doc: pb.ParagraphList) -> tuple[pb.Document, list[int]]:
    """The document once its job ended, and every progress ``done`` seen while it embedded."""
    created = await node.stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"remote-{unique}"))
    request = pb.SubmitDocumentsRequest(dataset_id=created.dataset.id, name=NAME, paragraphs=doc)
    (document,) = (await node.stub.documents.SubmitDocuments(request)).documents
    get = pb.GetDocumentRequest(dataset_id=created.dataset.id, document_id=document.id)
    done: list[int] = []

    async def sampled() -> pb.Document:
        """The document now, its progress noted on the way: every poll is a sample."""
        found: pb.Document = await node.stub.documents.GetDocument(get)
        if found.status == pb.DOCUMENT_STATUS_EMBEDDING:
            done.append(found.progress_done)
        return found

    ended = await eventually(sampled, ended_job, timeout=60, what="the end of the job")
    return ended, done


def ended_job(document: pb.Document) -> bool:
    return document.status not in RUNNING


def requests_with_marker(endpoint: EmbeddingsEndpoint) -> int:
    return sum(any(MARKER in text for text in inputs) for inputs in endpoint.inputs)


async def test_batches_go_concurrently_within_the_setting_and_land_in_order(node: Node, unique, sessions) -> None:
    document, done = await submit_and_follow(node, unique, paragraphs())
    assert (document.status, document.paragraph_count, document.error) == (pb.DOCUMENT_STATUS_READY, PARAGRAPHS, "")
    assert 1 < node.endpoint.max_concurrent <= CONCURRENCY
    assert max(node.endpoint.batch_sizes) <= BATCH
    assert sum(node.endpoint.batch_sizes) == PARAGRAPHS, "every paragraph embedded exactly once"
    assert done == sorted(done) and done[-1] <= PARAGRAPHS, f"progress went back: {done}"

    row = await run_read(sessions, lambda s: s.get(Document, document.id))
    assert row is not None
    stored = await node.store.document_paragraphs(document.dataset_id, document.id, row.active_version)
    assert [p.position for p in stored] == list(range(PARAGRAPHS))
    assert [p.content for p in stored] == [p.content for p in paragraphs().paragraphs]
    vectors = await node.store.dense_vectors([p.id for p in stored])
    for p in stored:  # each paragraph got the vector of its own text, not a neighbour's
        expected = node.endpoint.vector_for(indexed_text(NAME, p.title, p.content))
        np.testing.assert_allclose(vectors[p.id], expected, atol=1e-5)


async def test_a_batch_answered_429_is_retried_and_the_job_finishes(node: Node, unique) -> None:
    node.endpoint.fail_when(MARKER, 429, times=RETRIES)
    document, _ = await submit_and_follow(node, unique, paragraphs(marked=150))
    assert (document.status, document.paragraph_count, document.error) == (pb.DOCUMENT_STATUS_READY, PARAGRAPHS, "")
    assert requests_with_marker(node.endpoint) == RETRIES + 1
    assert node.endpoint.served_inputs == PARAGRAPHS
    assert await node.store.count(document.dataset_id, document.id) == PARAGRAPHS


async def test_a_batch_that_keeps_failing_fails_the_job_with_the_endpoints_answer(
    node: Node, unique, caplog: pytest.LogCaptureFixture
) -> None:
    node.endpoint.fail_when(MARKER, 500, times=100)
    document, _ = await submit_and_follow(node, unique, paragraphs(marked=150))
    assert document.status == pb.DOCUMENT_STATUS_FAILED
    # The job says the kind of failure; what the endpoint answered is in the service log.
    assert document.error == str(SENTENCES[FailureKind.UNAVAILABLE]), document.error
    assert from_proto(document.error_words) == SENTENCES[FailureKind.UNAVAILABLE]
    assert f"tried {RETRIES + 1} times" in caplog.text and "HTTP 500" in caplog.text
    assert "test-key" not in caplog.text
    assert requests_with_marker(node.endpoint) == RETRIES + 1, "retried a bounded number of times"
    assert await node.store.count(document.dataset_id, document.id) == 0, "nothing half-built stays"


async def test_a_cancel_stops_the_requests_in_flight_and_drops_what_was_staged(node: Node, unique) -> None:
    created = await node.stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"remote-cancel-{unique}"))
    dataset_id = created.dataset.id
    long_doc = pb.ParagraphList(paragraphs=list(paragraphs().paragraphs) * 4)
    request = pb.SubmitDocumentsRequest(dataset_id=dataset_id, name=NAME, paragraphs=long_doc)
    (document,) = (await node.stub.documents.SubmitDocuments(request)).documents
    get = pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document.id)
    document = await eventually(
        lambda: node.stub.documents.GetDocument(get),
        lambda d: d.progress_done >= 2 * BATCH or ended_job(d),
        timeout=60,
        what="two batches embedded",
    )
    assert document.status in RUNNING, document
    await node.stub.documents.CancelIngestion(pb.CancelIngestionRequest(dataset_id=dataset_id, document_id=document.id))
    document = await eventually(
        lambda: node.stub.documents.GetDocument(get), ended_job, what="the cancelled job ending"
    )
    assert document.status == pb.DOCUMENT_STATUS_CANCELLED and "cancel" in document.error, document
    assert sum(node.endpoint.batch_sizes) < len(long_doc.paragraphs), "the rest was never sent"
    assert await node.store.count(dataset_id, document.id) == 0
