"""Chooses the vector-store backend from settings: a Qdrant URL means the server, else edge."""

from __future__ import annotations

import logging
from pathlib import Path

from services.retrieval.store.base import VectorStore
from services.retrieval.store.edge import EdgeVectorStore
from services.retrieval.store.qdrant_server import DEFAULT_COLLECTION, QdrantServerStore

logger = logging.getLogger(__name__)


async def open_vector_store(
    *,
    qdrant_url: str | None,
    qdrant_api_key: str | None,
    edge_path: Path,
    dimension: int,
    collection: str = DEFAULT_COLLECTION,
) -> VectorStore:
    """Open the store, ready to use: the server collection or the edge shard is created if missing."""
    if qdrant_url:
        logger.info("vector store: Qdrant server at %s, collection %s", qdrant_url, collection)
        return await QdrantServerStore.open(
            url=qdrant_url, api_key=qdrant_api_key, dimension=dimension, collection=collection
        )
    logger.info("vector store: embedded qdrant-edge at %s", edge_path)
    return await EdgeVectorStore.open(Path(edge_path), dimension)
