"""A retrieval *process* killed (SIGKILL) in the middle of an ingestion job, and started
again on the same data folder and database: the job is taken over once its lease expires and
finishes; the vector store then holds exactly one version of the document's paragraphs, no
orphan point, and a keyword search finds them.

The process is ``python -m services.retrieval`` on port 0 (it announces its port in
``KB_RUN_DIR``), with a short lease so the restarted process takes the job over quickly. The
database is the suite's when that is PostgreSQL, else a SQLite file of the test's own; the vector
store is the embedded edge shard in the test's data folder, which the test opens itself once the
process has stopped, to count what is really stored.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy import create_engine, select
from sqlalchemy.engine import make_url

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.engine import sync_url
from kbcore.db.migrate import upgrade
from kbcore.db.tables import Document, IngestJob
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from services.retrieval.store.base import Hit, SearchMode, SearchQuery, VectorStore
from services.retrieval.store.factory import open_vector_store
from tests.eventually import eventually

pytestmark = [pytest.mark.fault, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 120.0
LEASE_SECONDS = 2.0
PARAGRAPHS = 400  # at tens of paragraphs per second, several seconds of embedding


@dataclass
class RetrievalProcess:
    process: subprocess.Popen[bytes]
    run_dir: Path
    log: Path
    port: int = 0

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""


@dataclass
class Launcher:
    root: Path
    env: dict[str, str]
    started: list[RetrievalProcess]

    async def start(self) -> RetrievalProcess:
        """Start a retrieval process and wait until it answers health checks as SERVING."""
        label = f"retrieval-{len(self.started) + 1}"
        run_dir = self.root / "run" / label
        run_dir.mkdir(parents=True)
        log = self.root / f"{label}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "services.retrieval"],
                cwd=REPO,
                env={**self.env, "KB_RUN_DIR": str(run_dir)},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        service = RetrievalProcess(process, run_dir, log)
        self.started.append(service)
        port_file = run_dir / "retrieval.port"

        def announced() -> bool:
            if process.poll() is not None:
                pytest.fail(f"{label} exited while starting:\n{service.output()}")
            return port_file.exists()

        try:
            await eventually(announced, timeout=START_TIMEOUT, interval=0.05, what=f"{label} announcing its port")
        except AssertionError as late:
            raise AssertionError(f"{late}:\n{service.output()}") from None
        service.port = int(port_file.read_text())
        channel = open_channel(service.target, service_credential(Settings.from_env(self.env)))
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=START_TIMEOUT, wait_for_ready=True
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, f"{label}: {reply.status}"
        finally:
            await channel.close()
        return service

    def stop_all(self) -> None:
        for service in self.started:
            if service.process.poll() is None:
                service.process.kill()
                service.process.wait(timeout=10)


@pytest.fixture
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The suite's database when it is PostgreSQL (already migrated), else a SQLite file of our own."""
    configured = os.environ.get("KB_DATABASE_URL", "")
    if configured and make_url(configured).get_backend_name() == "postgresql":
        url: str = request.getfixturevalue("database_url")
        return url
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    upgrade(url)
    return url


@pytest.fixture
def launcher(tmp_path: Path, database: str) -> Iterator[Launcher]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    env = {
        **base,
        "KB_DATA_DIR": str(tmp_path / "data"),
        "KB_DATABASE_URL": database,
        "KB_RETRIEVAL_PORT": "0",
        "KB_RETRIEVAL_METRICS_PORT": "0",
        "KB_INGEST_LEASE_SECONDS": str(LEASE_SECONDS),
        "KB_INGEST_POLL_SECONDS": "0.2",
        "KB_LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    started: list[RetrievalProcess] = []
    running = Launcher(tmp_path, env, started)
    try:
        yield running
    finally:
        running.stop_all()


def paragraph_list() -> pb.ParagraphList:
    return pb.ParagraphList(
        paragraphs=[
            pb.ParagraphInput(title=f"第{i}条", content=f"巡检规程{i}号：设备第{i}次巡检须记录温度、压力和流量。")
            for i in range(PARAGRAPHS)
        ]
    )


async def watch(stub: RetrievalStubs, dataset_id: str, document_id: str, until, timeout: float) -> pb.Document:
    """The document once ``until`` holds for it; one that fails first fails the test."""
    request = pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document_id)
    document = await eventually(
        lambda: stub.documents.GetDocument(request),
        lambda found: until(found) or found.status == pb.DOCUMENT_STATUS_FAILED,
        timeout=timeout,
        interval=0.05,
        what="the document reaching the expected state",
    )
    assert until(document), document
    return document  # type: ignore[no-any-return]


async def open_store(tmp_path: Path) -> VectorStore:
    """The processes' edge shard, opened by the test while no process holds it."""
    return await open_vector_store(
        qdrant_url=None, qdrant_api_key=None, edge_path=tmp_path / "data" / "qdrant-edge", dimension=384
    )


async def keyword(store: VectorStore, dataset_id: str, text: str) -> list[Hit]:
    query = SearchQuery(
        dataset_ids=(dataset_id,), text=text, vector=None, mode=SearchMode.KEYWORD, limit=5, similarity=0.0
    )
    return await store.search(query)


async def test_a_retrieval_process_killed_mid_job_resumes_it_with_one_version_and_no_orphans(
    launcher: Launcher, database: str, tmp_path: Path
) -> None:
    first = await launcher.start()
    channel = open_channel(first.target, service_credential(Settings.from_env(launcher.env)))
    stub = RetrievalStubs.of(channel)
    try:
        dataset_id = (
            await stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"kill-{tmp_path.name}"))
        ).dataset.id
        reply = await stub.documents.SubmitDocuments(
            pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="巡检规程", paragraphs=paragraph_list())
        )
        [queued] = reply.documents
        assert queued.status == pb.DOCUMENT_STATUS_QUEUED
        midway = await watch(stub, dataset_id, queued.id, lambda d: d.progress_done > 0, timeout=120)
    finally:
        await channel.close()
    first.process.send_signal(signal.SIGKILL)
    first.process.wait(timeout=10)
    assert midway.progress_total == PARAGRAPHS and midway.progress_done < PARAGRAPHS, "killed mid-job"
    store = await open_store(tmp_path)
    try:
        staged = await store.count(dataset_id, queued.id)
        assert 0 < staged < PARAGRAPHS, f"the kill should leave part of the version written: {staged}"
        assert await keyword(store, dataset_id, "巡检规程5号") == [], "a half-written version is never searched"
    finally:
        await store.close()

    second = await launcher.start()
    channel = open_channel(second.target, service_credential(Settings.from_env(launcher.env)))
    stub = RetrievalStubs.of(channel)
    try:
        ready = await watch(stub, dataset_id, queued.id, lambda d: d.status == pb.DOCUMENT_STATUS_READY, timeout=180)
        assert (ready.paragraph_count, ready.error) == (PARAGRAPHS, "")
        hits = await stub.search.Search(pb.SearchRequest(dataset_ids=[dataset_id], query="巡检规程123号"))
        assert any("巡检规程123号" in p.content for p in hits.paragraphs), "searched through the service"
    finally:
        await channel.close()
    second.process.send_signal(signal.SIGTERM)
    assert second.process.wait(timeout=60) == 0, second.output()

    engine = create_engine(sync_url(database))
    try:
        with engine.connect() as connection:
            document = connection.execute(select(Document).where(Document.id == queued.id)).one()
            jobs = connection.execute(select(IngestJob).where(IngestJob.document_id == queued.id)).all()
    finally:
        engine.dispose()
    assert document.status == "ready" and document.active_version > 0
    assert [(j.state, j.attempts) for j in jobs] == [("ready", 2)], "one job, taken over once after the kill"

    store = await open_store(tmp_path)
    try:
        assert await store.count(dataset_id, queued.id) == PARAGRAPHS, "exactly one version, no orphan points"
        assert await store.count(dataset_id) == PARAGRAPHS
        served = await store.document_paragraphs(dataset_id, queued.id, document.active_version)
        assert sorted(p.position for p in served) == list(range(PARAGRAPHS)), "every paragraph once"
        assert all(p.enabled and p.version == document.active_version for p in served)
        found = await keyword(store, dataset_id, "巡检规程357号")
        assert found and found[0].content == "巡检规程357号：设备第357次巡检须记录温度、压力和流量。", found[:2]
        assert found[0].title == "第357条" and found[0].version == document.active_version
    finally:
        await store.close()
