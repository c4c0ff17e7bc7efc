"""Brings the embedded stores back to normal once their disk has room again, without a write.

A store that was full serves from a read-only copy, or holds removals it deferred (a failed
job's staged points); the first write that finds room settles it, but a disk freed while nobody
writes should not keep a copy in memory or leave the points: this background task of the
retrieval service asks every store once a second (a cached ``statvfs`` when nothing waits).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable

from services.retrieval.store.edge_store import EdgeVectorStore

logger = logging.getLogger(__name__)

WATCH_SECONDS = 1.0


async def watch_disk(stores: Callable[[], Iterable[object]], every: float = WATCH_SECONDS) -> None:
    """Forever, until cancelled: settle every edge store that waits for room."""
    while True:
        await asyncio.sleep(every)
        for store in list(stores()):
            if not isinstance(store, EdgeVectorStore):
                continue
            try:
                await store.settle()
            except Exception:  # one store's trouble must not stop the watch of the others
                logger.exception("could not settle the vector store %s after its disk had room", store.path)
