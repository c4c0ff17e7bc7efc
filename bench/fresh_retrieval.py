"""A retrieval server of its own for a benchmark that follows a job through it: a fresh SQLite
file and edge shard in a throwaway folder, the server on port 0, a channel to it; all of it
closed and deleted at the end."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.server import RetrievalDeps, create_server
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store


@dataclass(frozen=True)
class FreshRetrieval:
    stub: RetrievalStubs
    store: VectorStore


@contextlib.asynccontextmanager
async def fresh_retrieval(prefix: str, embedder: Embedder, dimension: int) -> AsyncIterator[FreshRetrieval]:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    upgrade(url)
    engine = create_engine(url)
    store = await open_vector_store(
        qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=dimension
    )
    settings = Settings(data_dir=folder, database_url=url, retrieval_port=0)
    server = await create_server(
        settings, RetrievalDeps(session_factory(engine), store, embedder, OfflineExtractiveModel()), port=0
    )
    channel = open_channel(f"{settings.grpc_host}:{server.port}", service_credential(settings))
    try:
        yield FreshRetrieval(RetrievalStubs.of(channel), store)
    finally:
        await channel.close()
        await server.stop(grace=0)
        await store.close()
        await engine.dispose()
        shutil.rmtree(folder, ignore_errors=True)
