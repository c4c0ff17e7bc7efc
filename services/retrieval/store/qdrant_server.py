"""Vector store on a Qdrant server (or qdrant-client's local mode) through ``AsyncQdrantClient``.

Same layout and semantics as the edge store (``layout`` and ``plan`` decide both); this module
only renders them as qdrant-client models. Requires a server recent enough for
``RrfQuery(k=...)`` and corpus-scoped IDF (``IdfCorpusParams``), i.e. one matching the
qdrant-client version in the lock file.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import warnings
from collections.abc import Collection, Sequence
from typing import Any

from qdrant_client import AsyncQdrantClient
from qdrant_client.conversions.common_types import PointId
from qdrant_client.http import models as qm

from services.retrieval.store import layout
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
from services.retrieval.store.sparse import SparseTerms

logger = logging.getLogger(__name__)

DEFAULT_COLLECTION = "kb_paragraphs"


def _match(key: str, value: layout.Value) -> qm.FieldCondition:
    return qm.FieldCondition(key=key, match=qm.MatchValue(value=value))


def _in_datasets(dataset_ids: list[str]) -> qm.Filter:
    """Searchable points of any of the datasets, built exactly as on edge (``should`` of
    ``MatchValue``, which qdrant-edge evaluates much faster than ``MatchAny``), so both backends
    scope IDF alike."""
    return qm.Filter(should=[_match(layout.SEARCHABLE_IN, d) for d in dataset_ids])


def _filter(where: layout.Where) -> qm.Filter:
    must: list[qm.Condition] = [_match(k, v) for k, v in where.equal]
    if where.ids is not None:
        must.append(qm.HasIdCondition(has_id=list(where.ids)))
    if where.missing is not None:
        must.append(qm.IsEmptyCondition(is_empty=qm.PayloadField(key=where.missing)))
    must_not: list[qm.Condition] = [_match(k, v) for k, v in where.not_equal]
    if where.except_ids:
        must_not.append(qm.HasIdCondition(has_id=list(where.except_ids)))
    should: list[qm.Condition] = [_filter(w) for w in where.any_of]
    return qm.Filter(must=must or None, should=should or None, must_not=must_not or None)


def _sparse(terms: SparseTerms) -> qm.SparseVector:
    return qm.SparseVector(indices=list(terms.indices), values=list(terms.values))


def _point(point: ParagraphPoint, dimension: int) -> qm.PointStruct:
    vectors: dict[str, qm.Vector] = {layout.DENSE: layout.dense_vector(point.vector, dimension)}
    terms = layout.keyword_terms(point)
    if terms:  # omitted rather than empty, exactly as on edge, so both count the same IDF corpus
        vectors[layout.SPARSE] = _sparse(terms)
    return qm.PointStruct(id=layout.point_id(point.id), vector=vectors, payload=layout.payload(point))


def _question(question: QuestionPoint, dimension: int) -> qm.PointStruct:
    """Dense only: an attached question has no keyword terms (``layout``)."""
    vectors: dict[str, qm.Vector] = {layout.DENSE: layout.dense_vector(question.vector, dimension)}
    return qm.PointStruct(id=layout.point_id(question.id), vector=vectors, payload=layout.question_payload(question))


class QdrantServerStore:
    """``VectorStore`` on one collection; creates the collection and its indexes on first use."""

    def __init__(
        self, client: AsyncQdrantClient, *, dimension: int, collection: str = DEFAULT_COLLECTION, where: str = ""
    ) -> None:
        self._client = client
        self._dimension = dimension
        self._collection = collection
        self._ready = False
        self._ready_lock = asyncio.Lock()
        # A local (in-process) client is a store of its own; a server is shared by its address.
        self.identity = f"qdrant:{where}/{collection}" if where else f"qdrant-local:{uuid.uuid4()}/{collection}"

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
        store = cls(client, dimension=dimension, collection=collection, where=url or path or "")
        try:
            await store.ensure_collection()
        except BaseException:
            await client.close()
            raise
        return store

    @property
    def collection(self) -> str:
        """The collection this store reads and writes."""
        return self._collection

    def sharing_client(self, collection: str, dimension: int) -> QdrantServerStore:
        """A store of ``collection`` on this store's client, for another embedding model's vectors
        in the same Qdrant: the client stays this store's to close, so the new one's owner must not."""
        return QdrantServerStore(self._client, dimension=dimension, collection=collection, where=self.identity)

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
            await self._adopt_legacy()
            self._ready = True

    async def _adopt_legacy(self) -> None:
        """Points stored before versions existed become searchable version-0 points; one scroll
        that finds nothing when there are none. Each page's datasets are adopted whole, so the
        loop ends after at most one page per dataset. Idempotent: replicas may race through it."""
        adopted, first = 0, ""
        while True:
            page, _ = await self._client.scroll(
                self._collection,
                scroll_filter=_filter(layout.LEGACY),
                limit=layout.READ_BATCH,
                with_payload=["dataset_id"],
                with_vectors=False,
            )
            if not page or str(page[0].id) == first:
                break  # nothing left, or points without a dataset id that cannot be adopted
            first = str(page[0].id)
            await self._apply(layout.adoption(str((r.payload or {}).get("dataset_id", "")) for r in page))
            adopted += len(page)
        if adopted:
            logger.info("adopted the points of earlier versions in %s as published version 0", self._collection)

    async def _apply(self, steps: Sequence[layout.Step]) -> None:
        """The steps in order, each acknowledged (``wait``) before the next is sent."""
        for step in steps:
            if isinstance(step, layout.Reposition):
                await self._reposition(step)
                continue
            selector = qm.FilterSelector(filter=_filter(step.where))
            if isinstance(step, layout.SetPayload):
                await self._client.set_payload(self._collection, dict(step.values), points=selector, wait=True)
            else:
                await self._client.delete(self._collection, points_selector=selector, wait=True)

    async def _reposition(self, step: layout.Reposition) -> None:
        """One payload write per point, sent in batches (in order, each batch acknowledged): a
        document's paragraphs shifted by an insertion are thousands of writes."""
        writes = [
            qm.SetPayloadOperation(set_payload=qm.SetPayload(payload={"position": position}, points=[point]))
            for point, position in step.positions.items()
        ]
        for start in range(0, len(writes), layout.READ_BATCH):
            await self._client.batch_update_points(
                self._collection, update_operations=writes[start : start + layout.READ_BATCH], wait=True
            )

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

    async def upsert_questions(self, questions: Sequence[QuestionPoint]) -> None:
        if not questions:
            return
        await self.ensure_collection()
        for batch in layout.batches(questions):
            structs = [_question(q, self._dimension) for q in batch]
            await self._client.upsert(self._collection, points=structs, wait=True)

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
        records = await self._scroll_records(where)
        return layout.questions_in_order(layout.attached_question(i, fields) for i, fields in records)

    async def match_questions(
        self, dataset_ids: Sequence[str], vector: Sequence[float], limit: int, similarity: float
    ) -> list[QuestionMatch]:
        plan = plan_question_search(dataset_ids, vector, limit, similarity, self._dimension)
        if plan is None:
            return []
        await self.ensure_collection()
        response = await self._query(plan)
        return layout.best_matches([layout.question_match(p.id, p.score, p.payload) for p in response.points], limit)

    async def searchable_hits(self, dataset_ids: Sequence[str], paragraph_ids: Sequence[str]) -> dict[str, Hit]:
        if not paragraph_ids:
            return {}
        await self.ensure_collection()
        records = await self._client.retrieve(
            self._collection, [layout.point_id(i) for i in paragraph_ids], with_payload=True, with_vectors=False
        )
        return layout.searchable_hits(((r.id, r.payload) for r in records), dataset_ids)

    async def delete_document(self, dataset_id: str, document_id: str, keep_ids: Collection[str] = ()) -> None:
        await self._write(layout.document_removal(dataset_id, document_id, keep_ids))

    async def delete_dataset(self, dataset_id: str) -> None:
        await self._write([layout.Remove(layout.Where(equal=(("dataset_id", dataset_id),)))])

    async def publish_version(
        self, dataset_id: str, document_id: str, version: int, unchanged: Unchanged | None = None
    ) -> None:
        await self._write(layout.publication(dataset_id, document_id, version, unchanged))

    async def restore_served(
        self, dataset_id: str, document_id: str, version: int, kept: Sequence[StoredParagraph]
    ) -> None:
        await self._write(layout.restoration(dataset_id, document_id, version, kept))

    async def drop_version(self, dataset_id: str, document_id: str, version: int) -> None:
        await self._write([layout.Remove(layout.of_version(dataset_id, document_id, version))])

    async def set_enabled(self, dataset_id: str, paragraph_ids: Collection[str], enabled: bool) -> None:
        if paragraph_ids:
            await self._write(layout.enabling(dataset_id, paragraph_ids, enabled))

    async def delete_points(self, paragraph_ids: Collection[str]) -> None:
        if paragraph_ids:
            await self._write(layout.point_removal(paragraph_ids))

    async def _write(self, steps: Sequence[layout.Step]) -> None:
        await self.ensure_collection()
        await self._apply(steps)

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

    async def existing_ids(self, ids: Sequence[str]) -> set[str]:
        await self.ensure_collection()
        found: set[str] = set()
        for batch in layout.id_batches(ids):
            records = await self._client.retrieve(self._collection, list(batch), with_payload=False, with_vectors=False)
            found |= {str(r.id) for r in records}
        return {i for i in ids if layout.point_id(i) in found}

    async def document_paragraphs(self, dataset_id: str, document_id: str, version: int) -> list[StoredParagraph]:
        return await self._scroll(layout.of_version(dataset_id, document_id, version))

    async def served_paragraphs(self, dataset_id: str, document_id: str) -> list[StoredParagraph]:
        return await self._scroll(layout.of_served(dataset_id, document_id))

    async def _scroll(self, where: layout.Where) -> list[StoredParagraph]:
        return layout.in_order(layout.stored_paragraph(i, fields) for i, fields in await self._scroll_records(where))

    async def _scroll_records(self, where: layout.Where) -> list[tuple[object, dict[str, Any] | None]]:
        """Every point ``where`` selects, with its payload."""
        await self.ensure_collection()
        only = _filter(where)
        found: list[tuple[object, dict[str, Any] | None]] = []
        offset: PointId | None = None
        while True:
            page, offset = await self._client.scroll(
                self._collection, scroll_filter=only, limit=layout.READ_BATCH, offset=offset, with_payload=True
            )
            found += [(r.id, r.payload) for r in page]
            if offset is None:
                return found

    async def paragraph(self, paragraph_id: str) -> StoredParagraph | None:
        try:
            point = layout.point_id(paragraph_id)
        except ValueError:
            return None
        await self.ensure_collection()
        records = await self._client.retrieve(self._collection, [point], with_payload=True, with_vectors=False)
        return layout.paragraph_of(records[0].id, records[0].payload) if records else None

    async def count(self, dataset_id: str | None = None, document_id: str | None = None) -> int:
        await self.ensure_collection()
        where = layout.counted(dataset_id, document_id)
        only = _filter(where) if where else None
        return (await self._client.count(self._collection, count_filter=only, exact=True)).count

    async def check_room(self) -> None:
        """Nothing to ask: the server's disk is its own, and a write it cannot take is an error
        it answers, never a crash of this process."""

    async def close(self) -> None:
        await self._client.close()
