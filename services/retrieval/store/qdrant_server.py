"""Vector store on a Qdrant server (or qdrant-client's local mode) through ``AsyncQdrantClient``.

Same layout and semantics as the edge store (``layout`` and ``plan`` decide both); this module
only renders them as qdrant-client models. Requires a server recent enough for
``RrfQuery(k=...)`` and corpus-scoped IDF (``IdfCorpusParams``), i.e. one matching the
qdrant-client version in the lock file.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Collection, Sequence
from typing import Any

from qdrant_client import AsyncQdrantClient
from qdrant_client.http import models as qm

from services.retrieval.store import layout
from services.retrieval.store.base import Hit, ParagraphPoint, SearchQuery
from services.retrieval.store.plan import RRF_K, SearchPlan, plan_search
from services.retrieval.store.sparse import SparseTerms

logger = logging.getLogger(__name__)

DEFAULT_COLLECTION = "kb_paragraphs"


def _match(key: str, value: str) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def _in_datasets(dataset_ids: list[str]) -> qm.Filter:
    """Points of any of the datasets, built exactly as on edge (``should`` of ``MatchValue``, which
    qdrant-edge evaluates much faster than ``MatchAny``), so both backends scope IDF alike."""
    return qm.Filter(should=[_match("dataset_id", d) for d in dataset_ids])


def _sparse(terms: SparseTerms) -> qm.SparseVector:
    return qm.SparseVector(indices=list(terms.indices), values=list(terms.values))


def _point(point: ParagraphPoint, dimension: int) -> qm.PointStruct:
    vectors: dict[str, qm.Vector] = {layout.DENSE: layout.dense_vector(point.vector, dimension)}
    terms = layout.keyword_terms(point)
    if terms:  # omitted rather than empty, exactly as on edge, so both count the same IDF corpus
        vectors[layout.SPARSE] = _sparse(terms)
    return qm.PointStruct(id=layout.point_id(point.id), vector=vectors, payload=layout.payload(point))


class QdrantServerStore:
    """``VectorStore`` on one collection; creates the collection and its indexes on first use."""

    def __init__(self, client: AsyncQdrantClient, *, dimension: int, collection: str = DEFAULT_COLLECTION) -> None:
        self._client = client
        self._dimension = dimension
        self._collection = collection
        self._ready = False
        self._ready_lock = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        *,
        dimension: int,
        collection: str = DEFAULT_COLLECTION,
        url: str | None = None,
        api_key: str | None = None,
        path: str | None = None,
        location: str | None = None,
    ) -> QdrantServerStore:
        """Connect (``url`` + ``api_key``, or local ``path`` / ``location=":memory:"``) and prepare the collection."""
        client = AsyncQdrantClient(location=location, url=url, api_key=api_key, path=path)
        store = cls(client, dimension=dimension, collection=collection)
        try:
            await store.ensure_collection()
        except BaseException:
            await client.close()
            raise
        return store

    async def ensure_collection(self) -> None:
        """Create the collection and payload indexes if missing; check an existing one fits."""
        if self._ready:
            return
        async with self._ready_lock:
            if self._ready:
                return
            if await self._client.collection_exists(self._collection):
                await self._check_existing()
            else:
                await self._create()
            with warnings.catch_warnings():
                # Local mode warns that keyword indexes do nothing there; a server needs them.
                warnings.filterwarnings("ignore", message="Payload indexes have no effect")
                for field in layout.INDEXED_FIELDS:  # idempotent on a server
                    await self._client.create_payload_index(
                        self._collection, field, qm.PayloadSchemaType.KEYWORD, wait=True
                    )
            self._ready = True

    async def _create(self) -> None:
        try:
            await self._client.create_collection(
                self._collection,
                vectors_config={layout.DENSE: qm.VectorParams(size=self._dimension, distance=qm.Distance.COSINE)},
                sparse_vectors_config={layout.SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
            )
            logger.info("created Qdrant collection %s (dimension %d)", self._collection, self._dimension)
        except Exception:
            # Another replica may have created it between our check and our create.
            if not await self._client.collection_exists(self._collection):
                raise
            await self._check_existing()

    async def _check_existing(self) -> None:
        params = (await self._client.get_collection(self._collection)).config.params
        dense = params.vectors.get(layout.DENSE) if isinstance(params.vectors, dict) else None
        sparse = (params.sparse_vectors or {}).get(layout.SPARSE)
        if dense is None or sparse is None:
            raise ValueError(f"collection {self._collection!r} lacks the {layout.DENSE!r}/{layout.SPARSE!r} vectors")
        if dense.size != self._dimension:
            raise ValueError(
                f"collection {self._collection!r} stores {dense.size}-dimensional vectors, "
                f"the embedder produces {self._dimension}"
            )
        if sparse.modifier != qm.Modifier.IDF:
            raise ValueError(f"collection {self._collection!r}: sparse vector {layout.SPARSE!r} lacks the IDF modifier")

    async def upsert(self, points: Sequence[ParagraphPoint]) -> None:
        if not points:
            return
        await self.ensure_collection()
        for batch in layout.batches(points):
            # jieba segmentation of a batch is CPU work: keep it off the event loop.
            structs = await asyncio.to_thread(self._structs, batch)
            await self._client.upsert(self._collection, points=structs, wait=True)

    def _structs(self, batch: Sequence[ParagraphPoint]) -> list[qm.PointStruct]:
        return [_point(p, self._dimension) for p in batch]

    async def delete_document(self, dataset_id: str, document_id: str, keep_ids: Collection[str] = ()) -> None:
        keep: list[Any] = [qm.HasIdCondition(has_id=[layout.point_id(i) for i in keep_ids])] if keep_ids else []
        only = qm.Filter(
            must=[_match("dataset_id", dataset_id), _match("document_id", document_id)], must_not=keep or None
        )
        await self._delete(only)

    async def delete_dataset(self, dataset_id: str) -> None:
        await self._delete(qm.Filter(must=[_match("dataset_id", dataset_id)]))

    async def _delete(self, only: qm.Filter) -> None:
        await self.ensure_collection()
        await self._client.delete(self._collection, points_selector=qm.FilterSelector(filter=only), wait=True)

    async def search(self, query: SearchQuery) -> list[Hit]:
        plan = await asyncio.to_thread(plan_search, query, self._dimension)
        if plan is None:
            return []
        await self.ensure_collection()
        response = await self._query(plan)
        return layout.ranked([layout.hit(p.id, p.score, p.payload) for p in response.points], plan.limit)

    async def dense_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        await self.ensure_collection()
        records = await self._client.retrieve(
            self._collection, [layout.point_id(i) for i in ids], with_payload=False, with_vectors=[layout.DENSE]
        )
        return layout.dense_of_records((r.id, r.vector) for r in records)

    async def _query(self, plan: SearchPlan) -> qm.QueryResponse:
        only = _in_datasets(plan.dataset_ids)
        idf = qm.SearchParams(idf=qm.IdfCorpusParams(corpus=only))
        query: list[float] | qm.SparseVector | qm.RrfQuery
        using: str | None = None
        prefetch: list[qm.Prefetch] | None = None
        threshold: float | None = None
        params: qm.SearchParams | None = None
        if not plan.fuse and plan.dense is not None:
            query, using, threshold = plan.dense.vector, layout.DENSE, plan.dense.threshold
        elif not plan.fuse:
            assert plan.sparse is not None  # plan_search never yields a plan with neither leg
            query, using, params = _sparse(plan.sparse), layout.SPARSE, idf
        else:
            prefetch = []
            if plan.dense is not None:
                prefetch.append(
                    qm.Prefetch(
                        query=plan.dense.vector,
                        using=layout.DENSE,
                        filter=only,
                        limit=plan.candidates,
                        score_threshold=plan.dense.threshold,
                    )
                )
            if plan.sparse is not None:
                prefetch.append(
                    qm.Prefetch(
                        query=_sparse(plan.sparse),
                        using=layout.SPARSE,
                        filter=only,
                        limit=plan.candidates,
                        params=idf,
                    )
                )
            query = qm.RrfQuery(rrf=qm.Rrf(k=RRF_K))
        return await self._client.query_points(
            self._collection,
            query=query,
            using=using,
            prefetch=prefetch,
            # Fused: the prefetches filter, as on edge; a root filter would only repeat it.
            query_filter=None if plan.fuse else only,
            search_params=params,
            score_threshold=threshold,
            limit=plan.fetch,
            with_payload=True,
        )

    async def count(self, dataset_id: str | None = None, document_id: str | None = None) -> int:
        await self.ensure_collection()
        conditions = [_match(k, v) for k, v in (("dataset_id", dataset_id), ("document_id", document_id)) if v]
        only = qm.Filter(must=list(conditions)) if conditions else None
        return (await self._client.count(self._collection, count_filter=only, exact=True)).count

    async def close(self) -> None:
        await self._client.close()
