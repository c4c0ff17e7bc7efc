"""Vector store on qdrant-edge: the Qdrant engine in-process, for the one-machine default.

qdrant-edge is synchronous and pre-1.0, so it stays behind ``VectorStore``. What this module
relies on (checked on qdrant-edge-py 0.9.0; what each choice measured: bench/HISTORY.md):

* Calls keep the GIL for their whole duration, so reads need no lock and a search runs on the
  event loop (a thread would only add its hand-over); writes go to a worker thread, and take a
  lock so a batch and its ``flush`` never interleave with ``close`` or a shard swap. Reads
  borrow the shard from a ``ShardSlot`` so a swap closes the old shard only after them.
* New points land in an appendable plain segment searched exactly; HNSW exists only after
  ``optimize()``, which is slow and holds the GIL, so this process never runs it: ``maintenance``
  builds HNSW on a copy in a child process and swaps it in, replaying the writes made meanwhile.
* The exact scan reads every dense vector, so new shards store ``Turbo16`` (half of float32,
  scores within float rounding of exact; ``Turbo8`` loses recall). A shard keeps the datatype it
  was created with.
* The dataset filter is ``should`` over one ``MatchValue`` per dataset (``MatchAny`` is much
  slower here) on ``searchable_in``, which holds the dataset id only while a point is published
  and enabled (``layout``); the fused query repeats no filter its prefetches already apply.
* Global sparse IDF counts deleted points, so searches scope IDF to the searched datasets; the
  engine works that scope out on every search, so the store learns each term's scoped IDF once
  and passes it in the query weights until the next write (``scoped_idf``).
* The engine maps its files, and a write through a mapping to a full filesystem is a SIGBUS, not
  an error: every write asks ``DiskSpace`` first and is refused (StorageFull) unless it leaves
  ``KB_DISK_RESERVE_MB`` free (``shard_space``); a store whose disk cannot open its shard serves a
  read-only copy from elsewhere until a write or :meth:`EdgeVectorStore.settle` finds room.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from kbcore.errors import StorageFull
from kbcore.process.disk_space import DiskSpace, MiB
from kbcore.settings import Settings
from services.retrieval.store import layout, shard_files, shard_space
from services.retrieval.store.base import (
    AttachedQuestion,
    Hit,
    ParagraphPoint,
    QuestionMatch,
    QuestionPoint,
    SearchQuery,
    StoredParagraph,
    Unchanged,
)
from services.retrieval.store.plan import RRF_K, SearchPlan, plan_question_search, plan_search
from services.retrieval.store.scoped_idf import ABSENT_TERM_IDF, SETTLE_SECONDS, Scope, ScopedIdf, scope_of
from services.retrieval.store.shard_slot import ClosedStoreError, ShardSlot
from services.retrieval.store.sparse import SparseTerms

logger = logging.getLogger(__name__)

_CONFIG_FILE = "edge_config.json"  # written by EdgeShard.create: its presence means "reopen"
# Dense storage of new shards; existing shards keep theirs (see the module docstring).
DENSE_DATATYPE = qe.VectorStorageDatatype.Turbo16
# Candidates an HNSW search explores (ignored on plain segments). Qdrant's default is the build's
# ef_construct (100); 128 kept recall@10 at 1.0 on embedding-like vectors for 0.1 ms more at 100k.
HNSW_EF = 128
# Writes remembered while an index build runs, to replay onto the new shard: past this many
# upserted points (about 2 KB each with text and vectors) or other operations, the run is
# abandoned rather than the memory grown; a bulk load that overlaps a build costs only the build.
JOURNAL_LIMIT = 50_000
DEFAULT_RESERVE_BYTES = Settings.disk_reserve_mb * MiB


class MaintenanceError(RuntimeError):
    """An index build could not be swapped in; the store keeps serving its current shard."""


@dataclass(frozen=True)
class Swap:
    """What swapping a built shard in did, and what it held up."""

    generation: Path
    replayed_writes: int
    open_seconds: float  # opening the built shard: the GIL is held, so the service stalls
    held_seconds: float  # the last replays, commit and swap: writes wait (searches do not)


def _config(dimension: int, datatype: qe.VectorStorageDatatype) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={layout.DENSE: qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine, datatype=datatype)},
        sparse_vectors={layout.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


def shard_dimension(path: Path) -> int:
    """The dense vector size of the store at ``path``, as its current shard records it."""
    stored = json.loads((shard_files.current_folder(path) / _CONFIG_FILE).read_text(encoding="utf-8"))
    return int(stored["vectors"][layout.DENSE]["size"])


def index_build_config(
    folder: Path, *, m: int, ef_construct: int, full_scan_threshold_kb: int, indexing_threshold_kb: int, threads: int
) -> qe.EdgeConfig:
    """The config an index build loads the shard copy in ``folder`` with: its own vectors, and
    HNSW for every segment above ``indexing_threshold_kb``.

    The built segment's keyword index is memory-mapped (``Memory.Cached``): the default, an
    in-RAM immutable index, is rebuilt from the stored sparse vectors every time the shard is
    loaded, which took 10 s at 100k points, all of it holding the GIL of the service swapping
    the shard in. Mapped, the load is a fraction of a second and keyword search as fast."""
    stored = json.loads((folder / _CONFIG_FILE).read_text(encoding="utf-8"))
    base = _config(int(stored["vectors"][layout.DENSE]["size"]), _stored_datatype(folder))
    return qe.EdgeConfig(
        vectors=base.vectors,
        sparse_vectors={layout.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf, memory=qe.Memory.Cached)},
        hnsw_config=qe.HnswIndexConfig(
            m=m, ef_construct=ef_construct, full_scan_threshold=full_scan_threshold_kb, max_indexing_threads=threads
        ),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=indexing_threshold_kb),
    )


def _stored_datatype(path: Path) -> qe.VectorStorageDatatype:
    """The dense datatype the shard at ``path`` was created with, as its edge_config.json records
    it ("float16", "turbo16"; none for float32, which shards made before Turbo16 store)."""
    stored = json.loads((path / _CONFIG_FILE).read_text(encoding="utf-8"))
    name = str(stored.get("vectors", {}).get(layout.DENSE, {}).get("datatype") or "float32")
    datatype: qe.VectorStorageDatatype | None = getattr(qe.VectorStorageDatatype, name.capitalize(), None)
    if datatype is None:
        raise ValueError(f"qdrant-edge shard at {path} stores dense vectors as unknown datatype {name!r}")
    return datatype


def _match(key: str, value: layout.Value) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


# An IDF corpus of no points: the engine's IDF is then ln 2 for every term (see ``scoped_idf``).
_NO_POINTS = qe.Filter(must=[qe.HasIdCondition(set())])


def _in_datasets(dataset_ids: list[str]) -> qe.Filter:
    """Searchable points of any of the datasets: one ``MatchValue`` per dataset under ``should``,
    not ``MatchAny``, which 0.9.0 evaluates by collecting every matching id into a hash set."""
    return qe.Filter(should=[_match(layout.SEARCHABLE_IN, d) for d in dataset_ids])


def _filter(where: layout.Where) -> qe.Filter:
    must: list[Any] = [_match(k, v) for k, v in where.equal]
    if where.ids is not None:
        must.append(qe.HasIdCondition(set(where.ids)))
    if where.missing is not None:
        must.append(qe.IsEmptyCondition(where.missing))
    must_not: list[Any] = [_match(k, v) for k, v in where.not_equal]
    if where.except_ids:
        must_not.append(qe.HasIdCondition(set(where.except_ids)))
    should: list[Any] = [_filter(w) for w in where.any_of]
    return qe.Filter(must=must or None, should=should or None, must_not=must_not or None)


def _operations(step: layout.Step) -> list[qe.UpdateOperation]:
    if isinstance(step, layout.Reposition):
        return [
            qe.UpdateOperation.set_payload([uuid.UUID(i)], {"position": position})
            for i, position in step.positions.items()
        ]
    if isinstance(step, layout.SetPayload):
        return [qe.UpdateOperation.set_payload_by_filter(_filter(step.where), dict(step.values))]
    return [qe.UpdateOperation.delete_points_by_filter(_filter(step.where))]


def _all_operations(steps: Sequence[layout.Step]) -> list[qe.UpdateOperation]:
    return [operation for step in steps for operation in _operations(step)]


def _sparse(terms: SparseTerms) -> qe.SparseVector:
    return qe.SparseVector(indices=list(terms.indices), values=list(terms.values))


def _edge_point(point: ParagraphPoint, dimension: int) -> qe.Point:
    vectors: dict[str, list[float] | list[list[float]] | qe.SparseVector] = {
        layout.DENSE: layout.dense_vector(point.vector, dimension)
    }
    terms = layout.keyword_terms(point)
    if terms:  # an empty sparse vector would still count in scoped IDF on edge, not on the client
        vectors[layout.SPARSE] = _sparse(terms)
    return qe.Point(layout.point_id(point.id), vectors, layout.payload(point))


def _edge_question(question: QuestionPoint, dimension: int) -> qe.Point:
    """Dense only: an attached question has no keyword terms (``layout``)."""
    vectors: dict[str, list[float] | list[list[float]] | qe.SparseVector] = {
        layout.DENSE: layout.dense_vector(question.vector, dimension)
    }
    return qe.Point(layout.point_id(question.id), vectors, layout.question_payload(question))


def _request(plan: SearchPlan, exact: bool = False, weighted: SparseTerms | None = None) -> qe.QueryRequest:
    """The engine's query for ``plan``; ``weighted``: its keyword terms with their scoped IDF
    already in the weights (``scoped_idf``), so the engine is asked for IDF over no points."""
    only = _in_datasets(plan.dataset_ids)
    idf = qe.SearchParams(idf=qe.IdfParams(corpus=_NO_POINTS if weighted else only))
    dense_params = qe.SearchParams(exact=True) if exact else qe.SearchParams(hnsw_ef=HNSW_EF)
    dense_query = qe.Query.Nearest(plan.dense.vector, using=layout.DENSE) if plan.dense else None
    terms = weighted or plan.sparse
    sparse_query = qe.Query.Nearest(_sparse(terms), using=layout.SPARSE) if terms else None
    if not plan.fuse:
        if plan.dense is not None:
            return qe.QueryRequest(
                limit=plan.fetch,
                query=dense_query,
                filter=only,
                score_threshold=plan.dense.threshold,
                params=dense_params,
                with_payload=True,
            )
        return qe.QueryRequest(limit=plan.fetch, query=sparse_query, filter=only, params=idf, with_payload=True)
    prefetches = []
    if plan.dense is not None:
        prefetches.append(
            qe.Prefetch(
                limit=plan.candidates,
                query=dense_query,
                filter=only,
                score_threshold=plan.dense.threshold,
                params=dense_params,
            )
        )
    if plan.sparse is not None:
        prefetches.append(qe.Prefetch(limit=plan.candidates, query=sparse_query, filter=only, params=idf))
    return qe.QueryRequest(
        limit=plan.fetch,
        # The 0.9.0 stub types the query as "Fusion", not its nested Rrf class that the call takes.
        query=qe.Fusion.Rrf(k=RRF_K),  # type: ignore[arg-type]
        prefetches=prefetches,
        # No filter here: every fused point comes from a prefetch that already applied ``only``,
        # and a root filter would be evaluated once more (about 1 ms at 100k points).
        with_payload=True,
    )


def _idf_from(top: qe.ScoredPoint, index: int) -> float | None:
    """The IDF the engine applied to term ``index``, from a one-term search's best point (None
    if that point does not show the term with a positive weight, which a search never returns)."""
    stored = top.vector.get(layout.SPARSE) if isinstance(top.vector, dict) else None
    if not isinstance(stored, qe.SparseVector) or index not in stored.indices:
        return None
    weight = stored.values[list(stored.indices).index(index)]
    return float(top.score) / weight if weight > 0 else None


def _load_or_create(folder: Path, dimension: int) -> qe.EdgeShard:
    """The shard in ``folder``, created if the folder holds none (checking ``dimension`` fits)."""
    if (folder / _CONFIG_FILE).exists():
        datatype = _stored_datatype(folder)
        shard = qe.EdgeShard.load(str(folder), _config(dimension, datatype))  # raises if the dimension differs
        logger.info("opened qdrant-edge shard at %s (dense %s)", folder, datatype)
        if datatype != DENSE_DATATYPE:
            logger.info("shard %s stores dense %s, not %s: exact search is slower", folder, datatype, DENSE_DATATYPE)
        return shard
    folder.mkdir(parents=True, exist_ok=True)
    shard = qe.EdgeShard.create(str(folder), _config(dimension, DENSE_DATATYPE))
    logger.info("created qdrant-edge shard at %s (dimension %d, dense %s)", folder, dimension, DENSE_DATATYPE)
    return shard


def _flush_and_close(shard: qe.EdgeShard, path: Path) -> None:
    """Close ``shard``, flushed if its disk lets it: every write was flushed when it was made, and
    on a full disk the engine's last flush (it rewrites each segment's state file) fails with
    ENOSPC, which must not keep the shard open or the service from stopping."""
    try:
        shard.flush()
    except Exception as exc:  # the engine reports I/O errors as a plain Exception
        logger.warning("the vector store %s was closed without a last flush: %s", path, exc)
    shard.close()


def _open_shard(folder: Path, dimension: int) -> qe.EdgeShard:
    """``_load_or_create`` with the payload indexes searches filter on. Only missing ones are
    created: creating one that exists is a no-op for the index but still a WAL record, a write
    that a full disk could not take at every start."""
    shard = _load_or_create(folder, dimension)
    indexed = set(shard.info().payload_schema)
    for field in layout.INDEXED_FIELDS:
        if field not in indexed:
            shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    return shard


class EdgeVectorStore:
    """``VectorStore`` on one qdrant-edge shard directory; open it with :meth:`open`.

    Reads borrow the shard from a :class:`ShardSlot`; writes take ``_write_lock`` and, while an
    index build runs, are also kept in a journal. That is what lets index maintenance
    (``services.retrieval.store.maintenance``) build HNSW on a copy in another process and swap
    the result in while searches and writes go on: :meth:`begin_index_build`, :meth:`swap_in`.
    """

    def __init__(
        self,
        shard: qe.EdgeShard,
        dimension: int,
        path: Path,
        folder: Path | None = None,
        *,
        idf_settle_seconds: float = SETTLE_SECONDS,
        space: DiskSpace | None = None,
        copy: Path | None = None,
    ) -> None:
        """``copy``: the read-only copy ``shard`` was opened from, while the disk of ``path``
        has no room to open it there (``shard_space.readonly_copy``)."""
        self._slot = ShardSlot(shard, str(path))
        self._dimension = dimension
        self._path = path
        self._folder = path if folder is None else folder  # the generation in use (shard_files)
        self._space = space or DiskSpace(path, DEFAULT_RESERVE_BYTES)
        self._copy = copy
        self._deferred: list[layout.Step] = []  # removals waiting for the disk to have room
        self._write_lock = threading.Lock()
        self._idf = ScopedIdf(idf_settle_seconds)  # learned keyword IDF, dropped by every write
        self._journal: list[qe.UpdateOperation] | None = None  # writes since the build's copy
        self._journal_overflowed = False
        self._journal_weight = 0  # points upserted plus other operations, against JOURNAL_LIMIT
        self.last_write = time.monotonic()  # maintenance waits for writes to go quiet
        # A shard directory is one process's store: processes share ingestion jobs only when they
        # share a store, so its identity is the machine and the directory.
        self.identity = f"edge:{socket.gethostname()}:{path.resolve()}"

    @property
    def path(self) -> Path:
        """The configured path: the store's name, whichever generation folder holds its shard."""
        return self._path

    @property
    def folder(self) -> Path:
        """The shard folder in use now (where it lives, also while a read-only copy serves)."""
        return self._folder

    @property
    def reserve_bytes(self) -> int:
        """Free space the store's disk keeps: writes that would go below it are refused."""
        return self._space.reserve_bytes

    @property
    def read_only(self) -> bool:
        """Served from a read-only copy until its disk has room to open the shard again."""
        return self._copy is not None

    @classmethod
    async def open(
        cls,
        path: Path,
        dimension: int,
        *,
        idf_settle_seconds: float = SETTLE_SECONDS,
        reserve_bytes: int = DEFAULT_RESERVE_BYTES,
    ) -> EdgeVectorStore:
        """Create the shard at ``path``, or reopen it (checking that ``dimension`` still fits).
        ``idf_settle_seconds``: see ``scoped_idf`` (``math.inf`` turns learned IDF off);
        ``reserve_bytes``: the free space its disk keeps (``KB_DISK_RESERVE_MB``). On a disk
        without room to open it, it opens read-only from a copy elsewhere (StorageFull if no
        place has room for one)."""
        return await asyncio.to_thread(cls._open_sync, Path(path), dimension, idf_settle_seconds, reserve_bytes)

    @classmethod
    def _open_sync(cls, path: Path, dimension: int, idf_settle_seconds: float, reserve_bytes: int) -> EdgeVectorStore:
        space = DiskSpace(path, reserve_bytes)
        shard_files.remove_stale(path)  # what an interrupted index maintenance run left behind
        folder = shard_files.current_folder(path)
        exists = (folder / _CONFIG_FILE).exists()
        need = shard_space.open_need(folder, exists)
        copy = None if space.room_for(need) else shard_space.readonly_copy(path, folder, exists)
        if copy is None and space.free() < need:
            logger.error(
                "the disk of the vector store %s has %d MiB free, opening it needs %d MiB, and no other "
                "place has room for a read-only copy: free some space",
                path,
                space.free() // MiB,
                need // MiB,
            )
            raise StorageFull()
        shard = _open_shard(copy or folder, dimension)
        store = cls(shard, dimension, path, folder, idf_settle_seconds=idf_settle_seconds, space=space, copy=copy)
        if copy is not None:
            logger.warning(
                "the disk of the vector store %s has %d MiB free, less than opening it there and the "
                "reserve need (%d MiB): searches are served from a read-only copy in %s and writes are "
                "refused until there is room",
                path,
                space.free() // MiB,
                (need + reserve_bytes) // MiB,
                copy,
            )
        else:
            with store._write_lock:
                store._adopt_legacy()
        return store

    def _adopt_legacy(self) -> None:
        """Points stored before versions existed become searchable version-0 points; one scroll
        that finds nothing when there are none. Each page's datasets are adopted whole, so the
        loop ends after at most one page per dataset. Under the write lock; left for the next
        open when the disk has no room."""
        adopted, first = 0, ""
        while True:
            with self._slot.borrow() as shard:
                page, _ = shard.scroll(
                    qe.ScrollRequest(
                        limit=layout.READ_BATCH, filter=_filter(layout.LEGACY), with_payload=["dataset_id"]
                    )
                )
            if not page or str(page[0].id) == first:
                break  # nothing left, or points without a dataset id that cannot be adopted
            first = str(page[0].id)
            datasets = {str((r.payload or {}).get("dataset_id", "")) for r in page}
            if not self._space.room_for(shard_space.FILTER_WRITE):
                logger.warning("points of earlier versions in %s wait for room on its disk", self._path)
                return
            self._apply_now(_all_operations(layout.adoption(datasets)))
            adopted += len(page)
        if adopted:
            logger.info("adopted the points of earlier versions in %s as published version 0", self._path)

    def _write(
        self,
        operations: Sequence[qe.UpdateOperation],
        weights: Sequence[int] = (),
        need: int = shard_space.FILTER_WRITE,
    ) -> None:
        """Apply in order under the write lock, if the disk has room for ``need`` bytes
        (StorageFull otherwise); ``weights`` are the points each upsert carries."""
        with self._write_lock:
            self._make_room(need)
            self._apply_now(operations, weights)

    def _apply_now(self, operations: Sequence[qe.UpdateOperation], weights: Sequence[int] = ()) -> None:
        """Apply in order and flush; under the write lock, the room already granted."""
        with self._idf.changing():
            shard = self._slot.current()
            for index, operation in enumerate(operations):
                shard.update(operation)
                self._remember(operation, weights[index] if index < len(weights) else 1)
            shard.flush()
            self.last_write = time.monotonic()

    def _make_room(self, need: int) -> None:
        """Under the write lock: grant ``need`` bytes or raise StorageFull, before anything touches
        a mapped file. With room, the store first moves back from its read-only copy and applies
        the removals it deferred."""
        self._slot.current()  # ClosedStoreError before anything else
        if self._copy is not None and not self._reopen_in_place():
            raise StorageFull()
        self._space.require(need + shard_space.FILTER_WRITE * len(self._deferred))
        if self._deferred:
            deferred, self._deferred = self._deferred, []
            self._apply_now(_all_operations(deferred))
            logger.info("%s has room again: %d deferred removals applied", self._path, len(deferred))

    def _reopen_in_place(self) -> bool:
        """Under the write lock: open the shard where it lives and serve from it instead of the
        read-only copy, if its disk has room for that and the reserve; False if not yet. No write
        was taken meanwhile, so both hold the same points."""
        exists = (self._folder / _CONFIG_FILE).exists()
        if not self._space.room_for(shard_space.open_need(self._folder, exists)):
            return False
        shard = _open_shard(self._folder, self._dimension)
        with self._idf.changing():
            old = self._slot.replace(shard)
        copy, self._copy = self._copy, None
        if old is not None:
            self._slot.wait_returned(old)
            old.close()
        if copy is not None:
            shard_space.remove_copy(copy)
        logger.info("the disk of %s has room again: the store is served from it and takes writes", self._path)
        self._adopt_legacy()
        return True

    async def settle(self) -> None:
        """Once the disk has room: back from the read-only copy, deferred removals applied. A
        no-op otherwise, and cheap (the disk watch calls it every second)."""
        if self._copy is None and not self._deferred:
            return
        await asyncio.to_thread(self._settle_sync)

    def _settle_sync(self) -> None:
        with self._write_lock, contextlib.suppress(StorageFull, ClosedStoreError):
            self._make_room(0)

    async def check_room(self) -> None:
        """StorageFull now if a write would be refused: a caller that changes SQL before the
        store asks first, so that a full disk leaves both as they were."""
        need = 0
        if self._copy is not None:
            exists = (self._folder / _CONFIG_FILE).exists()
            need = await asyncio.to_thread(shard_space.open_need, self._folder, exists)
        if not self._space.room_for(need, fresh=False):
            raise StorageFull()

    def _remember(self, operation: qe.UpdateOperation, weight: int) -> None:
        """Journal a write applied while an index build runs (under the write lock)."""
        if self._journal is None or self._journal_overflowed:
            return
        self._journal_weight += weight
        if self._journal_weight > JOURNAL_LIMIT:
            self._journal_overflowed = True
            self._journal.clear()  # the build will not be swapped in: free the memory now
            logger.warning("over %d points written during an index build: it will be discarded", JOURNAL_LIMIT)
            return
        self._journal.append(operation)

    def _apply(self, steps: Sequence[layout.Step]) -> None:
        """The steps in order, under one write lock and one flush."""
        self._write(_all_operations(steps))

    async def upsert(self, points: Sequence[ParagraphPoint]) -> None:
        if points:
            await asyncio.to_thread(self._upsert_sync, points)

    def _upsert_sync(self, points: Sequence[ParagraphPoint | QuestionPoint]) -> None:
        batches = layout.batches(points)
        operations = [qe.UpdateOperation.upsert_points([self._edge(p) for p in batch]) for batch in batches]
        self._write(operations, [len(batch) for batch in batches], shard_space.upsert_need(points, self._dimension))

    def _edge(self, point: ParagraphPoint | QuestionPoint) -> qe.Point:
        if isinstance(point, QuestionPoint):
            return _edge_question(point, self._dimension)
        return _edge_point(point, self._dimension)

    async def upsert_questions(self, questions: Sequence[QuestionPoint]) -> None:
        if questions:
            await asyncio.to_thread(self._upsert_sync, questions)

    async def questions(
        self,
        dataset_id: str,
        *,
        paragraph_ids: Collection[str] | None = None,
        document_id: str | None = None,
        question_ids: Collection[str] | None = None,
    ) -> list[AttachedQuestion]:
        where = layout.of_questions(dataset_id, paragraph_ids, document_id, question_ids)
        if where is None:
            return []
        records = await asyncio.to_thread(self._scroll_records, where)
        return layout.questions_in_order(layout.attached_question(i, fields) for i, fields in records)

    async def match_questions(
        self, dataset_ids: Sequence[str], vector: Sequence[float], limit: int, similarity: float
    ) -> list[QuestionMatch]:
        plan = plan_question_search(dataset_ids, vector, limit, similarity, self._dimension)
        if plan is None:
            return []
        with self._slot.borrow() as shard:
            found = shard.query(_request(plan))
        return layout.best_matches([layout.question_match(p.id, p.score, p.payload) for p in found], limit)

    async def searchable_hits(self, dataset_ids: Sequence[str], paragraph_ids: Sequence[str]) -> dict[str, Hit]:
        if not paragraph_ids:
            return {}
        point_ids: list[int | uuid.UUID | str] = [layout.point_id(i) for i in paragraph_ids]
        records = await asyncio.to_thread(self._retrieve, point_ids, True, False)
        return layout.searchable_hits(((r.id, r.payload) for r in records), dataset_ids)

    async def delete_document(self, dataset_id: str, document_id: str, keep_ids: Collection[str] = ()) -> None:
        await asyncio.to_thread(self._apply, layout.document_removal(dataset_id, document_id, keep_ids))

    async def delete_dataset(self, dataset_id: str) -> None:
        await asyncio.to_thread(self._apply, [layout.Remove(layout.Where(equal=(("dataset_id", dataset_id),)))])

    async def publish_version(
        self, dataset_id: str, document_id: str, version: int, unchanged: Unchanged | None = None
    ) -> None:
        await asyncio.to_thread(self._apply, layout.publication(dataset_id, document_id, version, unchanged))

    async def restore_served(
        self, dataset_id: str, document_id: str, version: int, kept: Sequence[StoredParagraph]
    ) -> None:
        await asyncio.to_thread(self._apply, layout.restoration(dataset_id, document_id, version, kept))

    async def drop_version(self, dataset_id: str, document_id: str, version: int) -> None:
        """Deferred while the disk has no room: the points of a version being dropped (a failed
        or cancelled job's) are staged, never searched, and the job can end now."""
        await asyncio.to_thread(
            self._remove_or_defer, layout.Remove(layout.of_version(dataset_id, document_id, version))
        )

    def _remove_or_defer(self, step: layout.Step) -> None:
        with self._write_lock:
            try:
                self._make_room(shard_space.FILTER_WRITE)
            except StorageFull:
                self._deferred.append(step)
                logger.warning("%s: a removal waits for room on the disk (%d waiting)", self._path, len(self._deferred))
                return
            self._apply_now(_operations(step))

    async def set_enabled(self, dataset_id: str, paragraph_ids: Collection[str], enabled: bool) -> None:
        if paragraph_ids:
            await asyncio.to_thread(self._apply, layout.enabling(dataset_id, paragraph_ids, enabled))

    async def delete_points(self, paragraph_ids: Collection[str]) -> None:
        if paragraph_ids:
            await asyncio.to_thread(self._apply, layout.point_removal(paragraph_ids))

    async def search(self, query: SearchQuery) -> list[Hit]:
        """Run on the event loop itself, not in a worker thread: the query keeps the GIL for its
        whole duration, so a thread let nothing else run meanwhile and only added the hand-over
        (at 64 chats the thread pool's submit and wake-ups cost more CPU than the search)."""
        return self._search_sync(query, False)

    async def search_exact(self, query: SearchQuery) -> list[Hit]:
        """``search`` with the dense leg scanned exactly even where HNSW exists: the reference
        that HNSW recall is measured against."""
        return self._search_sync(query, True)

    def _search_sync(self, query: SearchQuery, exact: bool) -> list[Hit]:
        plan = plan_search(query, self._dimension)
        if plan is None:
            return []
        with self._slot.borrow() as shard:
            found = self._query(shard, plan, exact)
        return layout.ranked([layout.hit(p.id, p.score, p.payload) for p in found], plan.limit)

    def _query(self, shard: qe.EdgeShard, plan: SearchPlan, exact: bool) -> list[qe.ScoredPoint]:
        """Keyword terms go with their learned scoped IDF when every one is known; otherwise the
        engine scopes IDF itself, and the terms are learned for the next search."""
        if plan.sparse is None:
            return shard.query(_request(plan, exact))
        generation, scope = self._idf.generation, scope_of(plan.dataset_ids)
        weighted = self._idf.weighted(generation, scope, plan.sparse)
        if weighted is not None:
            found = shard.query(_request(plan, exact, weighted))
            if self._idf.unchanged(generation):
                return found
            # A write ran meanwhile: the learned IDF may not be the shard's any more.
        found = shard.query(_request(plan, exact))
        if self._idf.may_learn(generation):
            self._learn(shard, plan, scope, generation)
        return found

    def _learn(self, shard: qe.EdgeShard, plan: SearchPlan, scope: Scope, generation: int) -> None:
        """Measure the scoped IDF of the terms not yet known: one engine call per term, each the
        cost of one ordinary keyword search, paid once per term until the next write. A term's
        best-scoring point gives it: score = idf x the term's stored weight in that point."""
        assert plan.sparse is not None  # only searches with keyword terms learn
        only = _in_datasets(plan.dataset_ids)
        params = qe.SearchParams(idf=qe.IdfParams(corpus=only))
        learned: dict[int, float] = {}
        for index in self._idf.missing(scope, plan.sparse):
            top = shard.query(
                qe.QueryRequest(
                    limit=1,
                    query=qe.Query.Nearest(qe.SparseVector([index], [1.0]), using=layout.SPARSE),
                    filter=only,
                    params=params,
                    with_vector=[layout.SPARSE],
                )
            )
            idf = _idf_from(top[0], index) if top else ABSENT_TERM_IDF
            if idf is None:
                logger.warning("keyword term %d: its IDF could not be read back; not learned", index)
                continue
            learned[index] = idf
        self._idf.learn(generation, scope, learned)

    async def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        point_ids: list[int | uuid.UUID | str] = [layout.point_id(i) for i in ids]
        records = await asyncio.to_thread(self._retrieve, point_ids, False, [layout.DENSE])
        return layout.dense_of_records((r.id, r.vector) for r in records)

    def _retrieve(
        self, point_ids: list[int | uuid.UUID | str], payload: bool, vectors: bool | list[str]
    ) -> list[qe.Record]:
        with self._slot.borrow() as shard:
            return shard.retrieve(point_ids, payload, vectors)

    async def existing_ids(self, ids: Sequence[str]) -> set[str]:
        return await asyncio.to_thread(self._existing_sync, ids)

    def _existing_sync(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for batch in layout.id_batches(ids):
            point_ids: list[int | uuid.UUID | str] = list(batch)
            found |= {str(r.id) for r in self._retrieve(point_ids, False, False)}
        return {i for i in ids if layout.point_id(i) in found}

    async def document_paragraphs(self, dataset_id: str, document_id: str, version: int) -> list[StoredParagraph]:
        return await asyncio.to_thread(self._scroll_sync, layout.of_version(dataset_id, document_id, version))

    async def served_paragraphs(self, dataset_id: str, document_id: str) -> list[StoredParagraph]:
        return await asyncio.to_thread(self._scroll_sync, layout.of_served(dataset_id, document_id))

    def _scroll_sync(self, where: layout.Where) -> list[StoredParagraph]:
        return layout.in_order(layout.stored_paragraph(i, fields) for i, fields in self._scroll_records(where))

    def _scroll_records(self, where: layout.Where) -> list[tuple[object, dict[str, Any] | None]]:
        """Every point ``where`` selects, with its payload."""
        found: list[tuple[object, dict[str, Any] | None]] = []
        offset: int | uuid.UUID | str | None = None
        with self._slot.borrow() as shard:  # one shard for every page: a swap cannot split a scroll
            while True:
                request = qe.ScrollRequest(
                    offset=offset, limit=layout.READ_BATCH, filter=_filter(where), with_payload=True
                )
                page, offset = shard.scroll(request)
                found += [(r.id, r.payload) for r in page]
                if offset is None:
                    return found

    async def paragraph(self, paragraph_id: str) -> StoredParagraph | None:
        try:
            point_ids: list[int | uuid.UUID | str] = [layout.point_id(paragraph_id)]
        except ValueError:
            return None
        records = await asyncio.to_thread(self._retrieve, point_ids, True, False)
        return layout.paragraph_of(records[0].id, records[0].payload) if records else None

    async def count(self, dataset_id: str | None = None, document_id: str | None = None) -> int:
        where = layout.counted(dataset_id, document_id)
        only = _filter(where) if where else None
        return await asyncio.to_thread(self._count_sync, only)

    def _count_sync(self, only: qe.Filter | None) -> int:
        with self._slot.borrow() as shard:
            return shard.count(qe.CountRequest(exact=True, filter=only))

    async def index_state(self) -> tuple[int, int]:
        """(points, of which dense vectors in HNSW-indexed segments): what maintenance decides on."""

        def run() -> tuple[int, int]:
            with self._slot.borrow() as shard:
                info = shard.info()
            return info.points_count, info.indexed_vectors_count

        return await asyncio.to_thread(run)

    async def optimize(self) -> bool:
        """Build HNSW and vacuum deletions in this process. It holds the GIL for its whole run
        (minutes at 100k points), so the service never calls it: it uses
        ``services.retrieval.store.maintenance``, which builds in another process."""

        def run() -> bool:
            with self._write_lock:
                self._make_room(shard_space.build_need(self._folder))
                return self._slot.current().optimize()

        return await asyncio.to_thread(run)

    # Index maintenance: the protocol ``services.retrieval.store.maintenance`` drives.

    async def begin_index_build(self, target: Path) -> None:
        """Copy the shard as it is now to ``target`` (replacing what is there) and journal every
        later write until :meth:`swap_in` or :meth:`end_index_build`. Writes wait for the copy
        (flushed first, so the copy is a consistent state); searches do not."""
        await asyncio.to_thread(self._begin_sync, target)

    def _begin_sync(self, target: Path) -> None:
        with self._write_lock:
            if self._journal is not None:
                raise MaintenanceError("an index build is already running for this store")
            if target.exists():  # the partial folder of a run that was killed with its service
                shutil.rmtree(target)
            self._make_room(shard_space.build_need(self._folder))  # the copy, and what the build writes
            self._slot.current().flush()
            shard_files.copy_shard(self._folder, target)
            self._journal, self._journal_overflowed, self._journal_weight = [], False, 0

    def end_index_build(self) -> None:
        """Stop journaling for a build that will not be swapped in."""
        with self._write_lock:
            self._journal, self._journal_overflowed, self._journal_weight = None, False, 0

    async def swap_in(self, built: Path) -> Swap:
        """Serve from the shard built in ``built`` (closed; the copy :meth:`begin_index_build`
        made, indexed since): it becomes the next generation, gets the writes made since the
        copy, is committed as current, and replaces the old shard, which is closed and deleted
        once the searches running on it return."""
        return await asyncio.to_thread(self._swap_sync, built)

    def _swap_sync(self, built: Path) -> Swap:
        if not (built / _CONFIG_FILE).is_file():
            raise MaintenanceError("the index build left no shard to swap in")
        if not self._space.room_for(shard_space.open_need(built, True)):
            raise StorageFull()
        generation = shard_files.next_generation(self._path)
        os.replace(built, generation)
        shard_files.warm(generation)  # so that the open below, which holds the GIL, reads from memory
        began = time.perf_counter()
        try:
            new = _load_or_create(generation, self._dimension)  # holds the GIL: the one stall
        except BaseException:
            shutil.rmtree(generation, ignore_errors=True)
            raise
        loaded = time.perf_counter()
        try:
            replayed = self._replay(new, 0)  # catch up while writes go on
            with self._write_lock, self._idf.changing():
                held = time.perf_counter()
                self._slot.current()  # ClosedStoreError if the store was closed meanwhile
                replayed = self._replay(new, replayed)  # the rest, with writes held
                new.flush()
                shard_files.commit(self._path, generation)
                old = self._slot.replace(new)
                self._folder, self._journal = generation, None
        except BaseException:
            new.close()
            shutil.rmtree(generation, ignore_errors=True)
            raise
        swapped = time.perf_counter()
        if old is not None:
            self._slot.wait_returned(old)
            old.close()
        shard_files.remove_stale(self._path)
        logger.info(
            "swapped in %s: open %.2f s, %d writes replayed, writes held %.2f s, old shard removed in %.2f s",
            generation,
            loaded - began,
            replayed,
            swapped - held,
            time.perf_counter() - swapped,
        )
        return Swap(generation, replayed, loaded - began, swapped - held)

    def _replay(self, shard: qe.EdgeShard, start: int) -> int:
        """Apply the journal from ``start`` to ``shard``; returns where it ended."""
        journal = self._journal
        if journal is None or self._journal_overflowed:
            raise MaintenanceError("the writes made during the index build were not all kept")
        end = len(journal)
        for operation in journal[start:end]:
            shard.update(operation)
        return end

    async def close(self) -> None:
        def run() -> None:
            with self._write_lock:
                shard = self._slot.replace(None)
                self._journal, self._journal_overflowed, self._journal_weight = None, False, 0
                if self._deferred:
                    logger.warning(
                        "%s closes with %d removals of staged points not applied for want of disk space; "
                        "they are never searched, and go with their document's next version or deletion",
                        self._path,
                        len(self._deferred),
                    )
                if shard is not None:
                    self._slot.wait_returned(shard)
                    _flush_and_close(shard, self._path)
                if self._copy is not None:
                    shard_space.remove_copy(self._copy)

        await asyncio.to_thread(run)
