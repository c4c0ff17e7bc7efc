"""Builds the retrieval gRPC server from settings and its dependencies."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from kb.retrieval.v1 import retrieval_service_pb2, retrieval_service_pb2_grpc
from kbcore.db.engine import create_engine, session_factory
from kbcore.grpc_server import RunningServer, build_server
from kbcore.models.base import ModelClient
from kbcore.models.configured import model_client_for
from kbcore.segment import warm_up
from kbcore.settings import Settings
from services.retrieval.catalog import Catalog
from services.retrieval.embeddings import CachedQueryEmbedder, Embedder, create_embedder
from services.retrieval.evidence_matcher import with_matcher
from services.retrieval.ingest import Ingestor
from services.retrieval.loop import LoopLimits
from services.retrieval.search import Searcher
from services.retrieval.servicer import RetrievalServicer
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store

SERVICE_NAME = retrieval_service_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name


@dataclass
class RetrievalDeps:
    sessions: async_sessionmaker[AsyncSession]
    store: VectorStore
    embedder: Embedder
    model: ModelClient
    engine: AsyncEngine | None = None

    async def close(self) -> None:
        await self.store.close()
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
    )
    embedder = CachedQueryEmbedder(
        create_embedder(
            base_url=settings.embedding_base_url or None,
            api_key=settings.embedding_api_key or None,
            model=settings.embedding_model,
            dimension=settings.embedding_dimension,
            timeout=settings.model_timeout,
        )
    )
    model = model_client_for(settings)
    return RetrievalDeps(session_factory(engine), store, embedder, model, engine)


async def create_server(settings: Settings, deps: RetrievalDeps, port: int | None = None) -> RunningServer:
    catalog = Catalog(deps.sessions)
    servicer = RetrievalServicer(
        catalog=catalog,
        searcher=Searcher(deps.store, deps.embedder),
        ingestor=Ingestor(catalog, deps.store, deps.embedder),
        model=with_matcher(deps.model, deps.embedder, deps.store),
        limits=LoopLimits(max_rounds=settings.agent_max_rounds, evidence_tokens=settings.agent_evidence_tokens),
    )

    def register(server: grpc.aio.Server) -> None:
        retrieval_service_pb2_grpc.add_RetrievalServiceServicer_to_server(servicer, server)

    address = f"{settings.grpc_host}:{settings.retrieval_port if port is None else port}"
    return await build_server(address, register, [SERVICE_NAME])
