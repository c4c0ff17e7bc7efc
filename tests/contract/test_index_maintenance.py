"""Index maintenance on the edge store: HNSW built by a real child process on a copy of the
shard, swapped in while the store keeps serving. Results after the swap agree with exact search
within the HNSW recall bound, writes made during the build survive the swap, and a builder
killed halfway leaves the old shard serving and the next run clean."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio

from services.retrieval.store import edge_store, shard_files
from services.retrieval.store.base import ParagraphPoint, SearchMode, SearchQuery
from services.retrieval.store.edge_store import EdgeVectorStore, MaintenanceError
from services.retrieval.store.maintenance import (
    BuildReport,
    IndexBuildOptions,
    IndexMaintainer,
    rebuild_index,
)
from tests.eventually import eventually
from tests.process_stack import pid_alive

pytestmark = pytest.mark.asyncio(loop_scope="session")

DIMENSION = 384
POINTS = 2000
TOPICS = 40  # embedding-like: points gather around topics (i.i.d. random vectors have no neighbours)
SPREAD = 1.0  # noise norm relative to the topic vector
QUERIES = 40
DATASET = "ds"
RECALL_BOUND = 0.98
TIE_BOUND = 0.95  # hybrid against itself on the same data: only tie order differs (0.9675 seen in CI)
VECTOR, HYBRID = slice(0, None, 2), slice(1, None, 2)  # probes() alternates the two modes
# HNSW at test size: index every segment and let no filtered search fall back to a full scan.
SMALL = IndexBuildOptions(full_scan_threshold_kb=10, indexing_threshold_kb=1)
WORDS = tuple(
    "报销 差旅 预算 许可 病假 工资 住宿 审批 合同 发票 考勤 加班 年假 社保 公积金 采购 招标 验收 "
    "税务 审计 培训 绩效 晋升 离职 入职 保险 医疗 补贴 交通 餐费 会议 出差 申请 备案 登记 核查 "
    "档案 印章 资产 维修".split()
)


def embedding_like(rows: int, seed: int) -> np.ndarray:
    """Unit vectors around the same TOPICS whatever the seed: queries (another seed) ask about
    the corpus's topics, as questions do, and do not point at random directions."""
    topics = np.random.default_rng(0).standard_normal((TOPICS, DIMENSION))
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((rows, DIMENSION)) * SPREAD / np.sqrt(DIMENSION)
    vectors = topics[rng.integers(0, TOPICS, rows)] + noise
    unit: np.ndarray = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


def make_points(start: int, stop: int, seed: int = 1) -> list[ParagraphPoint]:
    vectors = embedding_like(stop, seed)[start:stop]
    return [
        ParagraphPoint(
            id=str(uuid.UUID(int=i + 1)),
            dataset_id=DATASET,
            document_id=str(uuid.UUID(int=(1 << 64) + i // 10)),
            document_name=f"文档{i // 10}",
            title="",
            content=paragraph_text(i),
            position=i % 10,
            vector=vector.tolist(),
        )
        for i, vector in zip(range(start, stop), vectors, strict=True)
    ]


def paragraph_text(index: int) -> str:
    """Words drawn with repeats and varied lengths: keyword scores rarely tie, so the hybrid
    ranking is decided by the engine and not by arbitrary tie order."""
    rng = np.random.default_rng(index)
    return "，".join(WORDS[w] for w in rng.integers(0, len(WORDS), int(rng.integers(3, 12)))) + "。"


def probes() -> list[SearchQuery]:
    vectors = embedding_like(QUERIES, seed=99)
    return [
        SearchQuery(
            dataset_ids=(DATASET,),
            text=f"{WORDS[i % len(WORDS)]}和{WORDS[(i * 7 + 3) % len(WORDS)]}怎么办理",
            vector=vector.tolist(),
            mode=mode,
            limit=10,
            similarity=-1.0,
        )
        for i, vector in enumerate(vectors)
        for mode in (SearchMode.VECTOR, SearchMode.HYBRID)
    ]


async def top_ids(store: EdgeVectorStore, queries: list[SearchQuery], exact: bool = False) -> list[set[str]]:
    search = store.search_exact if exact else store.search
    return [{h.id for h in await search(q)} for q in queries]


def overlap(found: list[set[str]], reference: list[set[str]]) -> float:
    return float(np.mean([len(a & b) / max(1, len(b)) for a, b in zip(found, reference, strict=True)]))


@pytest_asyncio.fixture(loop_scope="session")
async def loaded(tmp_path: Path) -> AsyncIterator[EdgeVectorStore]:
    store = await EdgeVectorStore.open(tmp_path / "edge", DIMENSION)
    await store.upsert(make_points(0, POINTS))
    yield store
    await store.close()


async def run_paused(
    store: EdgeVectorStore, options: IndexBuildOptions = SMALL
) -> tuple[asyncio.Task[BuildReport], int]:
    """A maintenance run whose builder is stopped (SIGSTOP) once it is optimizing the copy."""
    optimizing: asyncio.Queue[int] = asyncio.Queue()

    def progress(event: str, pid: int) -> None:
        if event == "optimizing":
            os.kill(pid, signal.SIGSTOP)
            optimizing.put_nowait(pid)

    task = asyncio.create_task(rebuild_index(store, options, progress))
    pid = await asyncio.wait_for(optimizing.get(), timeout=60)
    return task, pid


async def test_results_after_the_swap_match_exact_search_within_the_recall_bound(loaded: EdgeVectorStore) -> None:
    queries = probes()
    before = await top_ids(loaded, queries)
    assert await loaded.index_state() == (POINTS, POINTS)  # plain segment: sparse vectors only

    report = await rebuild_index(loaded, SMALL)

    assert report.points == POINTS and report.indexed_vectors == 2 * POINTS  # dense now in HNSW
    assert await loaded.index_state() == (POINTS, 2 * POINTS)
    after = await top_ids(loaded, queries)
    exact = await top_ids(loaded, queries, exact=True)
    # Vector search on the plain segment was exact, and the data did not change.
    assert exact[VECTOR] == before[VECTOR]
    # Hybrid fuses ranks, which tie often (a point ranked r by one leg alone ties with any point
    # ranked r by the other alone), and the engine orders ties arbitrarily from call to call.
    assert overlap(exact[HYBRID], before[HYBRID]) >= TIE_BOUND
    for mode in (VECTOR, HYBRID):
        assert overlap(after[mode], exact[mode]) >= RECALL_BOUND, mode
        assert overlap(after[mode], before[mode]) >= RECALL_BOUND - (1 - TIE_BOUND), mode
    assert loaded.folder == report.generation != loaded.path
    assert shard_files.current_folder(loaded.path) == report.generation
    assert not loaded.path.exists() and not shard_files.build_folder(loaded.path).exists()


async def test_writes_made_during_the_build_are_present_after_the_swap(loaded: EdgeVectorStore) -> None:
    queries = probes()
    before = await top_ids(loaded, queries)
    task, pid = await run_paused(loaded)
    try:
        assert await top_ids(loaded, queries) == before  # the live shard serves during the build
        added = make_points(POINTS, POINTS + 30)
        await loaded.upsert(added)
        first_document = make_points(0, 1)[0].document_id
        await loaded.delete_document(DATASET, first_document)
        disabled = make_points(100, 101)[0].id
        await loaded.set_enabled(DATASET, [disabled], False)
    finally:
        os.kill(pid, signal.SIGCONT)
    report = await task

    assert report.replayed_writes >= 3
    assert await loaded.count() == POINTS + 30 - 10
    assert await loaded.paragraph(make_points(5, 6)[0].id) is None  # deleted with its document
    newcomer = added[7]
    probe = SearchQuery((DATASET,), "", newcomer.vector, SearchMode.VECTOR, 1, -1.0)
    assert [h.id for h in await loaded.search(probe)] == [newcomer.id]
    stored = await loaded.paragraph(disabled)
    assert stored is not None and not stored.enabled
    assert disabled not in {h.id for q in queries for h in await loaded.search(q)}
    path = loaded.path
    await loaded.close()
    reopened = await EdgeVectorStore.open(path, DIMENSION)  # a restart opens the new generation
    try:
        assert reopened.folder == report.generation
        assert await reopened.count() == POINTS + 30 - 10
        assert [h.id for h in await reopened.search(probe)] == [newcomer.id]
    finally:
        await reopened.close()


async def test_a_killed_build_leaves_the_old_shard_serving_and_the_next_run_succeeds(
    loaded: EdgeVectorStore,
) -> None:
    queries = probes()
    before = await top_ids(loaded, queries)
    folder = loaded.folder
    task, pid = await run_paused(loaded)
    os.kill(pid, signal.SIGKILL)

    with pytest.raises(MaintenanceError):
        await task

    assert loaded.folder == folder and not shard_files.build_folder(loaded.path).exists()
    assert await top_ids(loaded, queries) == before
    extra = make_points(POINTS, POINTS + 5)
    await loaded.upsert(extra)  # writes go on, and no journal grows for a dead build
    report = await rebuild_index(loaded, SMALL)
    assert report.replayed_writes == 0 and report.points == POINTS + 5
    assert overlap(await top_ids(loaded, queries), await top_ids(loaded, queries, exact=True)) >= RECALL_BOUND


async def test_a_hung_build_is_stopped_at_its_timeout_and_the_old_shard_keeps_serving(
    loaded: EdgeVectorStore,
) -> None:
    """A builder that never finishes (stopped with SIGSTOP while optimizing) must not hold the
    maintainer forever: past the timeout it is killed and the run fails, leaving nothing."""
    queries = probes()
    before = await top_ids(loaded, queries)
    folder = loaded.folder
    task, pid = await run_paused(loaded, dataclasses.replace(SMALL, timeout_seconds=3.0))

    with pytest.raises(MaintenanceError, match="still running after 3 s"):
        await asyncio.wait_for(task, timeout=60)

    assert not pid_alive(pid), "the hung builder was left running"
    assert loaded.folder == folder and not shard_files.build_folder(loaded.path).exists()
    assert await top_ids(loaded, queries) == before
    report = await rebuild_index(loaded, SMALL)  # the next run is not blocked by the last
    assert report.points == await loaded.count()


async def test_leftovers_of_an_interrupted_run_are_removed_and_the_next_run_starts_clean(tmp_path: Path) -> None:
    path = tmp_path / "edge"
    store = await EdgeVectorStore.open(path, DIMENSION)
    await store.upsert(make_points(0, 300))
    partial = shard_files.build_folder(path)
    partial.mkdir()
    (partial / "edge_config.json").write_text("{half written", encoding="utf-8")
    report = await rebuild_index(store, SMALL)  # the run deletes the partial folder first
    assert report.points == 300
    await store.close()
    partial.mkdir()
    orphan = shard_files.next_generation(path)  # renamed by a run that died before committing
    orphan.mkdir()
    reopened = await EdgeVectorStore.open(path, DIMENSION)
    try:
        assert not partial.exists() and not orphan.exists()
        assert reopened.folder == report.generation and await reopened.count() == 300
    finally:
        await reopened.close()


async def test_the_maintainer_builds_once_enough_points_are_outside_hnsw(loaded: EdgeVectorStore) -> None:
    maintainer = IndexMaintainer(
        lambda: [loaded], min_points=POINTS, quiet_seconds=0, options=SMALL, check_seconds=0.05
    )
    assert await maintainer.due(loaded)
    task = asyncio.create_task(maintainer.run())
    try:
        await eventually(lambda: maintainer.runs, timeout=60, interval=0.05, what="the maintainer's first run")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert len(maintainer.runs) == 1
    assert await loaded.index_state() == (POINTS, 2 * POINTS)
    assert not await maintainer.due(loaded)  # nothing new: no second run


async def test_a_second_run_while_one_is_building_is_refused_and_leaves_it_alone(tmp_path: Path) -> None:
    store = await EdgeVectorStore.open(tmp_path / "edge", DIMENSION)
    building = shard_files.build_folder(store.path)
    try:
        await store.begin_index_build(building)
        with pytest.raises(MaintenanceError, match="already running"):
            await rebuild_index(store, SMALL)
        assert (building / "edge_config.json").is_file()  # the running build's copy is untouched
    finally:
        store.end_index_build()
        await store.close()


async def test_too_many_writes_during_the_build_abandon_it_and_lose_nothing(
    loaded: EdgeVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge_store, "JOURNAL_LIMIT", 5)
    folder = loaded.folder
    task, pid = await run_paused(loaded)
    try:
        await loaded.upsert(make_points(POINTS, POINTS + 6))  # one write of 6 points: over the limit
    finally:
        os.kill(pid, signal.SIGCONT)

    with pytest.raises(MaintenanceError, match="not all kept"):
        await task

    assert loaded.folder == folder and not shard_files.build_folder(loaded.path).exists()
    assert await loaded.count() == POINTS + 6
    assert sorted(p.name for p in loaded.path.parent.iterdir()) == [loaded.path.name]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.retrieval.store.maintenance", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )


async def test_the_operator_command_indexes_a_store_no_service_holds_and_refuses_a_held_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "edge"
    store = await EdgeVectorStore.open(path, DIMENSION)
    await store.upsert(make_points(0, 300))
    small = ["--full-scan-threshold-kb=10", "--indexing-threshold-kb=1"]

    held = await asyncio.to_thread(run_cli, "index", str(path), *small)
    assert held.returncode == 2 and "is a retrieval service using it" in held.stderr
    assert await store.count() == 300  # the open store was not disturbed
    await store.close()

    done = await asyncio.to_thread(run_cli, "index", str(path), *small)
    assert done.returncode == 0, done.stderr
    reopened = await EdgeVectorStore.open(path, DIMENSION)
    try:
        assert await reopened.index_state() == (300, 600)
        assert reopened.folder != path
    finally:
        await reopened.close()
    missing = await asyncio.to_thread(run_cli, "index", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "holds no qdrant-edge store" in missing.stderr
