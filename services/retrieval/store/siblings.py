"""The vector store of another embedding model, next to the deployment's own.

Vectors of different models never share a store: each registered embedding model (and vector
size) gets its own, derived from the default store so that every process sharing the default
one shares these too, and the default store stays exactly where it was.

- qdrant-edge: a sibling shard folder, ``<default folder>-<slug>`` (``data/qdrant-edge-<slug>``);
- a Qdrant server: a sibling collection, ``<default collection>_<slug>``, on the same client.

The edge store is only wrapped here (its folder read from it), never changed.
"""

from __future__ import annotations

import re

from services.retrieval.store.base import VectorStore
from services.retrieval.store.edge_store import EdgeVectorStore
from services.retrieval.store.qdrant_server import QdrantServerStore


def slug(model_id: str, dimension: int) -> str:
    """A name part safe for a folder and a collection, unique per model and vector size."""
    return f"{re.sub(r'[^A-Za-z0-9-]', '', model_id)[:40]}-{dimension}"


async def open_sibling(default: VectorStore, name: str, dimension: int) -> tuple[VectorStore, bool]:
    """The sibling store called ``name`` (created if missing), and whether closing it is ours to do
    (a Qdrant sibling shares the default store's client, which the default store closes)."""
    if isinstance(default, EdgeVectorStore):
        path = default.path  # the shard folder the default store was opened on
        folder = path.parent / f"{path.name}-{name}"
        return await EdgeVectorStore.open(folder, dimension, reserve_bytes=default.reserve_bytes), True
    if isinstance(default, QdrantServerStore):
        sibling = default.sharing_client(f"{default.collection}_{name}", dimension)
        await sibling.ensure_collection()
        return sibling, False
    raise ValueError(f"no sibling stores for a {type(default).__name__}: only one embedding model can be used")
