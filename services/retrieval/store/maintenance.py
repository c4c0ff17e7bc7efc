"""HNSW for the embedded store, built without stalling the service, then swapped in.

qdrant-edge's ``optimize()`` holds the GIL for its whole run (about 40 s for 100k points on one
core), so it must not run in the service's process. A maintenance run therefore:

1. copies the live shard (flushed, writes held for the copy only) to ``P.build`` and starts
   journaling every write the service makes from then on (:meth:`EdgeVectorStore.begin_index_build`);
2. runs ``python -m services.retrieval.store.maintenance build P.build`` in a child process at
   low priority, which loads the copy with an HNSW config, optimizes it and closes it, while the
   service keeps searching and writing the live shard;
3. swaps: the built shard becomes generation ``P.g<n>``, is opened in the service, receives the
   journaled writes, is committed as current, and replaces the live shard
   (:meth:`EdgeVectorStore.swap_in`). Searches never stop; writes wait for the last few replays.

If the builder dies (SIGKILL, OOM, a crash) the run fails, the journal is dropped and the
partial folder deleted: the live shard was never touched. A service that dies mid-run leaves
``P.build`` behind, which the next open or the next run deletes first.

Who starts a run: :class:`IndexMaintainer`, a background task of the retrieval service, once
``KB_EDGE_INDEX_MIN_POINTS`` points are outside HNSW and writes have been quiet for
``KB_EDGE_INDEX_QUIET_SECONDS`` (i.e. after a bulk load); ``rebuild_index`` is the same run for
tools and benchmarks holding the store themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kbcore.errors import StorageFull
from kbcore.process.child_process import Child, start_child
from kbcore.settings import Settings
from services.retrieval.store import shard_files
from services.retrieval.store.edge_store import EdgeVectorStore, MaintenanceError, index_build_config, shard_dimension
from services.retrieval.store.shard_slot import ClosedStoreError

logger = logging.getLogger(__name__)

MODULE = "services.retrieval.store.maintenance"
PROJECT_ROOT = Path(__file__).resolve().parents[3]  # the builder imports this package too
BUILDER_NICENESS = 10  # the service's searches come first on a shared machine
CHECK_SECONDS = 15.0  # how often the maintainer looks at the store
RETRY_SECONDS = 600.0  # after a failed run, before the next attempt
STDERR_TAIL = 2000  # characters of a failed builder's stderr kept in the log


@dataclass(frozen=True)
class IndexBuildOptions:
    """The HNSW build. Thresholds are Qdrant's, in KB of vector data: a segment smaller than
    ``indexing_threshold_kb`` stays plain, and a filtered search whose matching points hold less
    than ``full_scan_threshold_kb`` scans them exactly (small datasets keep exact results)."""

    m: int = 16
    ef_construct: int = 100
    full_scan_threshold_kb: int = 10_000
    indexing_threshold_kb: int = 1_000
    threads: int = 1  # the other core stays with the service
    # The builder reports nothing while it optimizes, so a hung one would hold the maintainer
    # forever: past this it is killed and the run fails like any other (1M points took about
    # 25 min on 2 cores).
    timeout_seconds: float = 7200.0

    def arguments(self) -> list[str]:
        return [
            f"--m={self.m}",
            f"--ef-construct={self.ef_construct}",
            f"--full-scan-threshold-kb={self.full_scan_threshold_kb}",
            f"--indexing-threshold-kb={self.indexing_threshold_kb}",
            f"--threads={self.threads}",
        ]


@dataclass(frozen=True)
class BuildReport:
    copy_seconds: float
    build_seconds: float  # the builder process, start to exit
    swap_seconds: float  # open the built shard, replay, commit, swap, close the old one
    open_seconds: float  # of which opening the built shard, the one step that holds the GIL
    held_seconds: float  # of which the step that holds writes
    points: int
    indexed_vectors: int
    replayed_writes: int
    generation: Path


Progress = Callable[[str, int], None]  # (event, builder pid): "started", "optimizing", "built"


async def rebuild_index(
    store: EdgeVectorStore, options: IndexBuildOptions | None = None, on_progress: Progress | None = None
) -> BuildReport:
    """One maintenance run (see the module docstring); MaintenanceError if the build failed, in
    which case the store serves its old shard as before."""
    options = options or IndexBuildOptions()
    build = shard_files.build_folder(store.path)
    began = time.perf_counter()
    await store.begin_index_build(build)
    copied = time.perf_counter()
    try:
        built = await _run_builder(build, options, on_progress)
        await asyncio.to_thread(shard_files.sync_tree, build)
        finished = time.perf_counter()
        swap = asyncio.ensure_future(store.swap_in(build))
        try:
            swapped = await asyncio.shield(swap)
        except asyncio.CancelledError:
            await swap  # runs in a thread that cannot be stopped: finish it, then stop
            raise
    except BaseException:
        store.end_index_build()
        await asyncio.to_thread(shutil.rmtree, build, True)
        raise
    report = BuildReport(
        copy_seconds=copied - began,
        build_seconds=finished - copied,
        swap_seconds=time.perf_counter() - finished,
        points=_count(built, "points"),
        indexed_vectors=_count(built, "indexed_vectors"),
        open_seconds=swapped.open_seconds,
        held_seconds=swapped.held_seconds,
        replayed_writes=swapped.replayed_writes,
        generation=swapped.generation,
    )
    logger.info("vector index rebuilt in %s: %s", store.path, report)
    return report


def _count(built: dict[str, object], key: str) -> int:
    value = built.get(key)
    return value if isinstance(value, int) else 0


async def _run_builder(build: Path, options: IndexBuildOptions, on_progress: Progress | None) -> dict[str, object]:
    """Run the builder process on ``build``; its last JSON line, or MaintenanceError."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p)
    process = await start_child([sys.executable, "-m", MODULE, "build", str(build), *options.arguments()], env=env)
    try:
        if on_progress is not None:
            on_progress("started", process.pid)
        stderr = asyncio.create_task(_read_all(process.stderr))
        try:
            async with asyncio.timeout(options.timeout_seconds):
                last = await _follow(process, on_progress)
                code = await process.wait()
        except TimeoutError:
            stderr.cancel()
            raise MaintenanceError(
                f"the index build was still running after {options.timeout_seconds:g} s and was stopped"
            ) from None
        errors = await stderr
    finally:
        if process.returncode is None:  # cancelled (the service is stopping) or out of time
            process.kill()
            await process.wait()
    if code != 0 or last.get("event") != "built":
        logger.warning("index builder for %s exited with %s: %s", build, code, errors[-STDERR_TAIL:])
        raise MaintenanceError(f"the index build stopped before it finished (exit status {code})")
    return last


async def _follow(process: Child, on_progress: Progress | None) -> dict[str, object]:
    """The builder's events as they come; its last one."""
    last: dict[str, object] = {}
    async for line in process.stdout:
        last = _event(line)
        if on_progress is not None and "event" in last:
            on_progress(str(last["event"]), process.pid)
    return last


async def _read_all(stream: asyncio.StreamReader) -> str:
    return (await stream.read()).decode("utf-8", "replace")


def _event(line: bytes) -> dict[str, object]:
    try:
        parsed = json.loads(line)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


class IndexMaintainer:
    """Runs :func:`rebuild_index` on a store when enough points sit outside HNSW and writes have
    gone quiet: after a bulk load, not in the middle of one. ``stores`` is asked every check, so
    stores opened later (one per embedding model) are looked after too; one run at a time."""

    def __init__(
        self,
        stores: Callable[[], Iterable[object]],
        min_points: int,
        quiet_seconds: float,
        options: IndexBuildOptions | None = None,
        check_seconds: float = CHECK_SECONDS,
    ) -> None:
        self._stores = stores
        self._min_points = min_points
        self._quiet_seconds = quiet_seconds
        self._options = options or IndexBuildOptions()
        self._check_seconds = check_seconds
        self.runs: list[BuildReport] = []
        self._baseline: dict[Path, int] = {}  # what the last run left outside HNSW, per store

    @staticmethod
    async def outside_hnsw(store: EdgeVectorStore) -> int:
        """Points whose dense vector is in no HNSW segment, estimated: qdrant-edge counts indexed
        dense and sparse vectors together, and nearly every point has one of each."""
        points, indexed = await store.index_state()
        return max(0, 2 * points - indexed)

    async def due(self, store: EdgeVectorStore) -> bool:
        """Enough new points since the last run (its leftover estimate is the baseline, so points
        without a sparse vector cannot make it run again and again), and writes have gone quiet."""
        quiet = time.monotonic() - store.last_write >= self._quiet_seconds
        outside = await self.outside_hnsw(store) - self._baseline.get(store.path, 0)
        return quiet and outside >= self._min_points

    async def check(self) -> None:
        """One look at every edge store; a run for each that is due."""
        for store in list(self._stores()):
            if not isinstance(store, EdgeVectorStore):
                continue
            try:
                if await self.due(store):
                    self.runs.append(await rebuild_index(store, self._options))
                    self._baseline[store.path] = await self.outside_hnsw(store)
            except ClosedStoreError:
                continue  # closed since it was listed
            except (MaintenanceError, OSError, StorageFull) as exc:  # StorageFull: refused before it began
                logger.warning("vector index maintenance of %s failed, its index keeps serving: %s", store.path, exc)
                await asyncio.sleep(RETRY_SECONDS)

    async def run(self) -> None:
        """Forever, until cancelled (the service stopping, which also kills a running builder)."""
        while True:
            await asyncio.sleep(self._check_seconds)
            await self.check()


def index_maintainer(settings: Settings, stores: Callable[[], Iterable[object]]) -> IndexMaintainer | None:
    """The service's maintainer from its settings, or None when ``KB_EDGE_INDEX_MIN_POINTS`` is 0."""
    if settings.edge_index_min_points <= 0:
        return None
    options = IndexBuildOptions(
        threads=settings.edge_index_threads, timeout_seconds=settings.edge_index_build_timeout_seconds
    )
    return IndexMaintainer(stores, settings.edge_index_min_points, settings.edge_index_quiet_seconds, options)


def build(folder: Path, options: IndexBuildOptions) -> dict[str, object]:
    """The builder process's work: HNSW on the closed shard copy in ``folder``."""
    import qdrant_edge as qe  # only the builder needs the engine here

    config = index_build_config(
        folder,
        m=options.m,
        ef_construct=options.ef_construct,
        full_scan_threshold_kb=options.full_scan_threshold_kb,
        indexing_threshold_kb=options.indexing_threshold_kb,
        threads=options.threads,
    )
    shard = qe.EdgeShard.load(str(folder), config)
    try:
        _emit({"event": "optimizing"})
        started = time.perf_counter()
        shard.optimize()
        seconds = time.perf_counter() - started
        info = shard.info()
        shard.flush()
    finally:
        shard.close()
    return {
        "event": "built",
        "seconds": seconds,
        "points": info.points_count,
        "indexed_vectors": info.indexed_vectors_count,
    }


def _emit(event: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    offline = commands.add_parser(
        "index", help="build and swap in HNSW for the store at PATH while no service has it open"
    )
    offline.add_argument("path", type=Path, help="the store's path, e.g. data/qdrant-edge")
    builder = commands.add_parser("build", help="optimize the closed shard copy in FOLDER (the service runs this)")
    builder.add_argument("folder", type=Path)
    defaults = IndexBuildOptions()
    for command in (offline, builder):
        command.add_argument("--m", type=int, default=defaults.m)
        command.add_argument("--ef-construct", type=int, default=defaults.ef_construct)
        command.add_argument("--full-scan-threshold-kb", type=int, default=defaults.full_scan_threshold_kb)
        command.add_argument("--indexing-threshold-kb", type=int, default=defaults.indexing_threshold_kb)
        command.add_argument("--threads", type=int, default=defaults.threads)
    return parser


async def index_offline(path: Path, options: IndexBuildOptions) -> BuildReport:
    """The operator's run on a store no service holds (qdrant-edge locks an open shard's WAL, so
    opening one a running service holds fails instead of sharing it)."""
    store = await EdgeVectorStore.open(path, shard_dimension(path))
    try:
        return await rebuild_index(store, options)
    finally:
        await store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    options = IndexBuildOptions(
        m=args.m,
        ef_construct=args.ef_construct,
        full_scan_threshold_kb=args.full_scan_threshold_kb,
        indexing_threshold_kb=args.indexing_threshold_kb,
        threads=args.threads,
    )
    if args.command == "index":
        if not (shard_files.current_folder(args.path) / "edge_config.json").is_file():
            parser.error(f"{args.path} holds no qdrant-edge store")
        try:
            report = asyncio.run(index_offline(args.path, options))
        except Exception as exc:  # the engine reports a held shard as a plain Exception
            parser.exit(
                2, f"cannot index {args.path} (is a retrieval service using it? it maintains it itself): {exc}\n"
            )
        _emit({"event": "indexed", "generation": str(report.generation), "build_seconds": report.build_seconds})
        return 0
    if not (args.folder / "edge_config.json").is_file():
        parser.error(f"{args.folder} holds no qdrant-edge shard")
    os.nice(BUILDER_NICENESS)
    _emit(build(args.folder, options))
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    sys.exit(main())
