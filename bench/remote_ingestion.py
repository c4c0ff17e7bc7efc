"""Ingestion with a remote embeddings endpoint, against what the endpoint can serve.

The endpoint is ``tests.fakes.embeddings_endpoint`` in a process of its own: it serves ``SLOTS``
requests at once (later ones wait), each for ``LATENCY`` seconds, of at most ``MAX_BATCH``
inputs, so its capacity is SLOTS × MAX_BATCH / LATENCY paragraphs/s and no client can get more.
A retrieval server in this process (fresh SQLite file and edge shard, its own ingestion worker,
``OpenAIEmbedder`` pointed at the endpoint) takes one document of pre-split paragraphs (the
sample knowledge base's, repeated with a counter so that every text differs) through
``SubmitDocuments``, polled with ``GetDocument`` until ready; paragraphs over the seconds from
submit to ready is the ingestion rate, the whole job included (queue, embed, stage, publish).

Three runs: the settings as deployed (a batch of ``MAX_BATCH``, ``SLOTS`` requests in flight);
one request of 16 at a time, the path before the throughput work (which also waited for each store write
before the next request); and an embedder that answers at once, which is the ceiling of the
rest of the path on this machine: an endpoint faster than that cannot be kept busy by anyone.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.fresh_retrieval import fresh_retrieval
from bench.kb_fixture import SAMPLE_DOCS
from bench.processes import announced_process
from bench.table import Row
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import Embedder, OpenAIEmbedder, PassageBatching
from services.retrieval.ingestion.parsing import ParseLimits, parse_document
from tests.fakes.embeddings_endpoint import Capacity

SECTION = "ingestion"
ENDPOINT = Capacity(latency=0.5, slots=4, max_batch=64)  # 512 paragraphs/s: a hosted API's pace
JOB_SECONDS = 15.0  # the document takes this long at capacity: the job's fixed costs weigh < 5%
BEFORE_SECONDS = 5.0  # the same for the path before, at its own pace (16 per round trip)
BEFORE = PassageBatching(size=16, in_flight=1)  # the path before: one request of 16 at a time
DIMENSION = 384
POLL = 0.05
TARGET = 0.90


@dataclass(frozen=True)
class Run:
    paragraphs: int
    seconds: float
    cpu_seconds: float  # this process's CPU over the job (retrieval server and the polling alike)

    @property
    def rate(self) -> float:
        return self.paragraphs / self.seconds


class InstantEmbedder:
    """Answers at once with fixed unit vectors: the rest of the ingestion path alone."""

    dimension = DIMENSION
    passage_batching = PassageBatching(ENDPOINT.max_batch, ENDPOINT.slots, overlap=True)

    def __init__(self) -> None:
        self._vector: list[float] = [float(np.sqrt(1 / DIMENSION))] * DIMENSION

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector] * len(texts)

    async def embed_query(self, text: str) -> list[float]:
        return self._vector

    async def close(self) -> None:
        return None


def _paragraphs(count: int) -> pb.ParagraphList:
    """``count`` paragraphs cycled from the sample documents, each text made distinct."""
    limits = ParseLimits()
    sample = [
        p
        for path in sorted(SAMPLE_DOCS.glob("*.md"))
        for p in parse_document(path.name, path.read_bytes(), limits).paragraphs
    ]
    return pb.ParagraphList(
        paragraphs=[
            pb.ParagraphInput(title=sample[i % len(sample)].title, content=f"{sample[i % len(sample)].content}（{i}）")
            for i in range(count)
        ]
    )


@contextlib.asynccontextmanager
async def endpoint_process(capacity: Capacity) -> AsyncIterator[str]:
    """The fake endpoint in its own process; its base URL."""
    argv = [
        *(sys.executable, "-m", "tests.fakes.embeddings_endpoint", "--latency", str(capacity.latency)),
        *("--slots", str(capacity.slots), "--max-batch", str(capacity.max_batch), "--dimension", str(DIMENSION)),
    ]
    async with announced_process(argv, "the embeddings endpoint") as (_, port):
        yield f"http://127.0.0.1:{port}/v1"


async def _ingest(embedder: Embedder, count: int) -> Run:
    """One document of ``count`` paragraphs through a fresh retrieval server, submit to ready."""
    paragraphs = _paragraphs(count)
    async with fresh_retrieval("kb-bench-remote-", embedder, DIMENSION) as retrieval:
        stub = retrieval.stub
        dataset = (await stub.datasets.CreateDataset(pb.CreateDatasetRequest(name="bench remote"), timeout=30)).dataset
        started, cpu = time.perf_counter(), time.process_time()
        request = pb.SubmitDocumentsRequest(dataset_id=dataset.id, name="远程嵌入", paragraphs=paragraphs)
        (document,) = (await stub.documents.SubmitDocuments(request, timeout=60)).documents
        while document.status not in (pb.DOCUMENT_STATUS_READY, pb.DOCUMENT_STATUS_FAILED):
            await asyncio.sleep(POLL)
            document = await stub.documents.GetDocument(
                pb.GetDocumentRequest(dataset_id=dataset.id, document_id=document.id)
            )
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        if document.status != pb.DOCUMENT_STATUS_READY or await retrieval.store.count(dataset.id) != count:
            raise RuntimeError(f"the remote-embedder job did not end ready with {count} paragraphs: {document.error}")
    return Run(count, seconds, cpu)


def _remote(base_url: str, batching: PassageBatching) -> OpenAIEmbedder:
    return OpenAIEmbedder(
        base_url=base_url,
        api_key="bench",
        model="fake-embedding",
        dimension=DIMENSION,
        timeout=30,
        batch_size=batching.size,
        concurrency=batching.in_flight,
    )


async def run() -> tuple[list[Row], dict[str, Any]]:
    """Rows, and raw data: ``{"capacity", "latency", "slots", "max_batch", "now", "before", "ceiling"}``
    (each run as ``{"paragraphs", "seconds", "per_second", "cpu_seconds"}``)."""
    capacity = ENDPOINT.per_second
    settings = Settings()
    deployed = PassageBatching(settings.embedding_batch, settings.embedding_concurrency)
    runs: dict[str, Run] = {}
    runs["ceiling"] = await _ingest(InstantEmbedder(), int(capacity * JOB_SECONDS))
    async with endpoint_process(ENDPOINT) as base_url:
        for label, batching, count in (
            ("now", deployed, int(capacity * JOB_SECONDS)),
            ("before", BEFORE, int(BEFORE.size / ENDPOINT.latency * BEFORE_SECONDS)),
        ):
            embedder = _remote(base_url, batching)
            try:
                runs[label] = await _ingest(embedder, count)
            finally:
                await embedder.close()
    raw: dict[str, Any] = {
        "capacity": capacity,
        "latency": ENDPOINT.latency,
        "slots": ENDPOINT.slots,
        "max_batch": ENDPOINT.max_batch,
        "batching": {"batch": deployed.size, "concurrency": deployed.in_flight},
        **{
            k: {"paragraphs": r.paragraphs, "seconds": r.seconds, "per_second": r.rate, "cpu_seconds": r.cpu_seconds}
            for k, r in runs.items()
        },
    }
    return _rows(raw), raw


def _rows(raw: dict[str, Any]) -> list[Row]:
    capacity, now, before = raw["capacity"], raw["now"]["per_second"], raw["before"]["per_second"]
    ceiling = raw["ceiling"]["per_second"]
    endpoint = (
        f"fake embeddings endpoint: {raw['latency'] * 1000:.0f} ms per request, {raw['slots']} served at once, "
        f"≤ {raw['max_batch']} inputs each"
    )
    batching = raw["batching"]
    return [
        Row(SECTION, f"{endpoint}: capacity", f"{capacity:.0f} paragraphs/s"),
        Row(
            SECTION,
            f"remote embedder, SubmitDocuments → ready ({raw['now']['paragraphs']} paragraphs; "
            f"batch {batching['batch']}, {batching['concurrency']} in flight)",
            f"{now:.0f} paragraphs/s ({raw['now']['cpu_seconds'] / raw['now']['paragraphs'] * 1000:.2f} ms CPU each)",
        ),
        Row(
            SECTION,
            "remote ingestion / endpoint capacity",
            f"{now / capacity:.2f}",
            f"≥ {TARGET:.2f}",
            now / capacity >= TARGET,
        ),
        Row(
            SECTION,
            f"before: one request of 16 at a time ({raw['before']['paragraphs']} paragraphs)",
            f"{before:.0f} paragraphs/s ({before / capacity:.2f} of capacity)",
        ),
        Row(
            SECTION,
            f"ceiling of the rest of the path: an embedder that answers at once ({raw['ceiling']['paragraphs']} paragraphs)",
            f"{ceiling:.0f} paragraphs/s ({raw['ceiling']['cpu_seconds'] / raw['ceiling']['paragraphs'] * 1000:.2f} ms CPU each)",
        ),
        # Where this machine cannot even store at the endpoint's pace, this says how close the
        # pipeline came to what could be reached: a diagnosis, not the target.
        Row(SECTION, "remote ingestion / the lower of capacity and ceiling", f"{now / min(capacity, ceiling):.2f}"),
    ]
