"""Chooses the vector-store backend from settings: a Qdrant URL means the server, else edge."""

from __future__ import annotations

import logging
from pathlib import Path

from kbcore.process.disk_space import MiB
from services.retrieval.store.base import VectorStore
from services.retrieval.store.edge_store import DEFAULT_RESERVE_BYTES, EdgeVectorStore
from services.retrieval.store.qdrant_server import DEFAULT_COLLECTION, QdrantServerStore

logger = logging.getLogger(__name__)


async def open_vector_store(
    *,
    qdrant_url: str | None,
    qdrant_api_key: str | None,
    edge_path: Path,
    dimension: int,
    collection: str = DEFAULT_COLLECTION,
    disk_reserve_mb: int = DEFAULT_RESERVE_BYTES // MiB,
) -> VectorStore:
    """Open the store, ready to use: the server collection or the edge shard is created if
    missing. ``disk_reserve_mb``: the free space the edge shard's disk keeps (KB_DISK_RESERVE_MB)."""
    if qdrant_url:
        logger.info("vector store: Qdrant server at %s, collection %s", qdrant_url, collection)
        return await QdrantServerStore.open(
            url=qdrant_url, api_key=qdrant_api_key, dimension=dimension, collection=collection
        )
    logger.info("vector store: embedded qdrant-edge at %s", edge_path)
    return await EdgeVectorStore.open(Path(edge_path), dimension, reserve_bytes=disk_reserve_mb * MiB)
