"""Builds the retrieval gRPC server from settings and its dependencies."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from grpc_stubs.retrieval.v1 import retrieval_service_pb2, retrieval_service_pb2_grpc
from kbcore.db.engine import SqliteSessions, create_engine, session_factory
from kbcore.db.sqlite_space import keep_giving_back
from kbcore.models.base import ModelClient
from kbcore.models.endpoints import EndpointClients
from kbcore.models.factory import model_client_for
from kbcore.models.rerank import RerankEndpoints
from kbcore.process.disk_space import DiskSpace, MiB
from kbcore.rpc.bootstrap import RunningServer, build_server
from kbcore.rpc.service_credential import service_credential
from kbcore.settings import Settings
from kbcore.text.segment import warm_up
from services.retrieval.caller_check import CallerCheck
from services.retrieval.catalog.attached_question_admin import AttachedQuestionAdmin
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.catalog.dataset_admin import DatasetAdmin
from services.retrieval.catalog.dataset_rpcs import DatasetRpcs
from services.retrieval.catalog.document_lifecycle import DocumentLifecycle
from services.retrieval.catalog.document_rpcs import DocumentRpcs
from services.retrieval.catalog.paragraph_editor import ParagraphEditor
from services.retrieval.catalog.paragraph_rpcs import ParagraphRpcs
from services.retrieval.embedding.embedders import CachedQueryEmbedder, Embedder, create_embedder
from services.retrieval.embedding.spaces import EmbeddingSpaces, default_spaces
from services.retrieval.ingestion.jobs.intake import UploadIntake
from services.retrieval.ingestion.jobs.queue import JobQueue
from services.retrieval.ingestion.jobs.reembed_queue import SwitchQueue
from services.retrieval.ingestion.jobs.reembed_worker import SwitchWorker
from services.retrieval.ingestion.jobs.sources import job_parser
from services.retrieval.ingestion.jobs.spool import UploadSpool
from services.retrieval.ingestion.jobs.upload_budget import Shares, UploadBudget
from services.retrieval.ingestion.jobs.worker import IngestWorker
from services.retrieval.ingestion.parsing import ParseLimits
from services.retrieval.ingestion.parsing.web_fetch import FetchPolicy
from services.retrieval.ingestion.space_builder import SpaceBuilder
from services.retrieval.ingestion.web_sync import SyncSchedule, WebSync
from services.retrieval.search.evidence_matcher import local_judge, with_matcher
from services.retrieval.search.loop import LoopLimits
from services.retrieval.search.query import Searcher
from services.retrieval.search.search_rpcs import SearchRpcs
from services.retrieval.store.base import VectorStore
from services.retrieval.store.disk_watch import watch_disk
from services.retrieval.store.factory import open_vector_store
from services.retrieval.store.maintenance import index_maintainer

SERVICE_NAMES = tuple(service.full_name for service in retrieval_service_pb2.DESCRIPTOR.services_by_name.values())


@dataclass
class RetrievalDeps:
    sessions: async_sessionmaker[AsyncSession]
    store: VectorStore
    embedder: Embedder
    model: ModelClient
    engine: AsyncEngine | None = None
    # The registered models' clients, made by ``create_server``.
    endpoints: EndpointClients | None = None
    reranks: RerankEndpoints | None = None  # the rerank calls, made by ``create_server``
    # Each embedding model's embedder and store, made by ``create_server``; the
    # default's are ``embedder`` and ``store``.
    spaces: EmbeddingSpaces | None = None
    # What cached answers expire by: the real clock, or one a test moves on instead of waiting.
    clock: Callable[[], float] = time.monotonic

    async def close(self) -> None:
        if self.spaces is not None:
            await self.spaces.close()
        if self.reranks is not None:
            await self.reranks.aclose()
        if self.endpoints is not None:
            await self.endpoints.aclose()
        await self.store.close()
        await self.embedder.close()
        await self.model.aclose()
        if self.engine is not None:
            await self.engine.dispose()


async def open_deps(settings: Settings) -> RetrievalDeps:
    warm_up()  # jieba's dictionary: once at start, not on the first query
    engine = create_engine(settings.resolved_database_url())
    store = await open_vector_store(
        qdrant_url=settings.qdrant_url or None,
        qdrant_api_key=settings.qdrant_api_key or None,
        edge_path=settings.data_dir / "qdrant-edge",
        dimension=settings.embedding_dimension,
        collection=settings.qdrant_collection,
        disk_reserve_mb=settings.disk_reserve_mb,
    )
    embedder = CachedQueryEmbedder(
        create_embedder(
            base_url=settings.embedding_base_url or None,
            api_key=settings.embedding_api_key or None,
            model=settings.embedding_model,
            dimension=settings.embedding_dimension,
            timeout=settings.model_timeout,
            batch_size=settings.embedding_batch,
            concurrency=settings.embedding_concurrency,
        )
    )
    model = model_client_for(settings)
    return RetrievalDeps(session_factory(engine), store, embedder, model, engine)


def upload_intake(settings: Settings, deps: RetrievalDeps) -> UploadIntake:
    """A file's way in: the deployment's budget (SQL), and this process's spool on the data
    folder's disk, cleared of what stopped processes left there."""
    budget = UploadBudget(deps.sessions, Shares.of_mib(settings.upload_budget_mb, settings.upload_caller_mb))
    root = settings.data_dir / "spool"
    spool = UploadSpool(root, DiskSpace(root, settings.disk_reserve_mb * MiB))
    spool.sweep()
    return UploadIntake.from_settings(settings, budget, spool)


def _search_rpcs(settings: Settings, deps: RetrievalDeps, catalog: Catalog, spaces: EmbeddingSpaces) -> SearchRpcs:
    """Search and the loop: the default model with its matcher, the endpoints and reranks the
    operator configured, and the local evidence judge when it is on."""
    return SearchRpcs(
        catalog=catalog,
        searcher=Searcher(deps.store, deps.embedder, spaces),
        model=with_matcher(deps.model, deps.embedder, deps.store),
        limits=LoopLimits(max_rounds=settings.agent_max_rounds, evidence_tokens=settings.agent_evidence_tokens),
        embedder=deps.embedder,
        endpoints=deps.endpoints,  # remote endpoints only: the offline matcher wraps the default alone
        reranks=deps.reranks,
        judge=local_judge(deps.embedder, deps.store) if settings.agent_evidence_judge else None,
    )


async def create_server(settings: Settings, deps: RetrievalDeps, port: int | None = None) -> RunningServer:
    """The server and its ingestion worker (every replica runs one; they share the SQL queue)."""
    catalog = Catalog(deps.sessions)
    spaces = deps.spaces = default_spaces(settings, deps)
    queue = JobQueue(deps.sessions, settings.ingest_lease_seconds, spaces.identity)
    builder = SpaceBuilder(spaces)
    limits = ParseLimits.from_settings(settings)
    worker = IngestWorker(
        queue,
        builder,
        job_parser(limits, queue.source),
        settings.ingest_poll_seconds,
        slots=settings.ingest_concurrency,
        job_seconds=limits.wall_seconds,
    )
    switches = SwitchQueue(deps.sessions, settings.ingest_lease_seconds, spaces.identity)
    switcher = SwitchWorker(switches, spaces, deps.sessions, settings.ingest_poll_seconds)
    fetch = FetchPolicy.from_settings(settings)
    lifecycle = DocumentLifecycle(
        catalog, queue, builder, spaces, worker.wake, limits, fetch, upload_intake(settings, deps)
    )
    web_sync = WebSync(deps.sessions, fetch, lifecycle.submit_upload)
    schedule = SyncSchedule(deps.sessions, web_sync, settings.web_sync_poll_seconds)
    deps.endpoints = EndpointClients(deps.sessions, settings)
    deps.reranks = RerankEndpoints(deps.sessions, settings)
    search = _search_rpcs(settings, deps, catalog, spaces)
    datasets = DatasetRpcs(DatasetAdmin(catalog, deps.sessions, spaces, switches, switcher.wake), lifecycle)
    documents = DocumentRpcs(lifecycle, web_sync)
    paragraphs = ParagraphRpcs(
        ParagraphEditor(deps.sessions, queue, spaces), AttachedQuestionAdmin(deps.sessions, queue, spaces)
    )

    def register(server: grpc.aio.Server) -> None:
        retrieval_service_pb2_grpc.add_SearchServiceServicer_to_server(search, server)
        retrieval_service_pb2_grpc.add_DatasetServiceServicer_to_server(datasets, server)
        retrieval_service_pb2_grpc.add_DocumentServiceServicer_to_server(documents, server)
        retrieval_service_pb2_grpc.add_ParagraphServiceServicer_to_server(paragraphs, server)

    address = f"{settings.grpc_host}:{settings.retrieval_port if port is None else port}"
    # After the credential check and entry guard: a call made for a person is checked against
    # the permission table (caller_check.py); the deployment's own calls go on unchecked.
    running = await build_server(address, register, SERVICE_NAMES, service_credential(settings), [CallerCheck()])
    running.background.append(asyncio.create_task(worker.run(), name="ingestion worker"))
    # HNSW for the embedded store, built in a child process after bulk loads (store/maintenance.py).
    maintainer = index_maintainer(settings, spaces.stores)
    if maintainer is not None:
        running.background.append(asyncio.create_task(maintainer.run(), name="vector index maintenance"))
    running.background.append(asyncio.create_task(switcher.run(), name="re-embedding worker"))
    running.background.append(asyncio.create_task(schedule.run(), name="web sync schedule"))
    # A store whose disk was full takes writes again by itself once it has room (store/disk_watch.py).
    running.background.append(asyncio.create_task(watch_disk(spaces.stores), name="disk space watch"))
    # The space deleted rows leave, back to the disk (kbcore/db/sqlite_space.py; one service does it).
    if isinstance(deps.sessions, SqliteSessions):
        running.background.append(asyncio.create_task(keep_giving_back(deps.sessions), name="SQLite space give-back"))
    return running
