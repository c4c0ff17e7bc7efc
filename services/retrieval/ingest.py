"""Document ingestion: split, embed in batches (streaming progress), store, then catalog.

Everything is embedded before anything is written, and the catalog row is written last,
so a failure leaves no half-ingested document. Paragraph ids derive from the document and
the paragraph's text, and a document re-added with the same content changes nothing.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from kbcore.db.models import Document, new_id
from kbcore.errors import InvalidRequest
from services.retrieval.catalog import Catalog
from services.retrieval.embeddings import Embedder
from services.retrieval.splitter import SplitParagraph
from services.retrieval.store.base import ParagraphPoint, VectorStore
from services.retrieval.store.layout import indexed_text

EMBED_BATCH = 16
MAX_PARAGRAPHS_PER_DOCUMENT = 5000


@dataclass(frozen=True)
class IngestProgress:
    embedded: int
    total: int


def paragraph_id(document_id: str, position: int, content: str) -> str:
    return str(uuid.uuid5(uuid.UUID(document_id), f"{position}:{content}"))


def content_hash(paragraphs: Sequence[SplitParagraph]) -> str:
    digest = hashlib.sha256()
    for p in paragraphs:
        digest.update(p.title.encode() + b"\x1f" + p.content.encode() + b"\x1e")
    return digest.hexdigest()


class Ingestor:
    def __init__(self, catalog: Catalog, store: VectorStore, embedder: Embedder) -> None:
        self._catalog = catalog
        self._store = store
        self._embedder = embedder

    async def add(
        self, dataset_id: str, name: str, paragraphs: Sequence[SplitParagraph]
    ) -> AsyncIterator[IngestProgress | Document]:
        """Index one document: progress while its paragraphs are embedded, then its catalog row.

        A document re-added with the same content, whose points are all in the store, is
        returned as it is, without embedding anything."""
        await self._check(dataset_id, paragraphs)
        digest = content_hash(paragraphs)
        existing = await self._catalog.find_document(dataset_id, name)
        total = len(paragraphs)
        if existing is not None and await self._is_intact(dataset_id, existing, digest):
            yield IngestProgress(total, total)
            yield existing
            return
        document_id = existing.id if existing is not None else new_id()
        yield IngestProgress(0, total)
        vectors: list[Sequence[float]] = []
        for start in range(0, total, EMBED_BATCH):
            vectors.extend(await self._embed(name, paragraphs[start : start + EMBED_BATCH]))
            yield IngestProgress(len(vectors), total)
        points = _points(dataset_id, document_id, name, paragraphs, vectors)
        row = _catalog_row(document_id, dataset_id, name, digest, paragraphs, existing)
        yield await self._store_version(points, row, existing)

    async def _check(self, dataset_id: str, paragraphs: Sequence[SplitParagraph]) -> None:
        """Refuse before any work is done: an unknown dataset, an empty document, or one too large."""
        await self._catalog.get_dataset(dataset_id)
        if not paragraphs:
            raise InvalidRequest("the document has no text to index")
        if len(paragraphs) > MAX_PARAGRAPHS_PER_DOCUMENT:
            raise InvalidRequest(
                f"the document has {len(paragraphs)} paragraphs; the limit is {MAX_PARAGRAPHS_PER_DOCUMENT}"
            )

    async def _is_intact(self, dataset_id: str, existing: Document, digest: str) -> bool:
        """The stored version has this content and all its points: a vector store that was reset
        must not be trusted blindly, so its documents are indexed again even when unchanged."""
        return (
            existing.content_hash == digest
            and await self._store.count(dataset_id, existing.id) == existing.paragraph_count
        )

    async def _embed(self, name: str, batch: Sequence[SplitParagraph]) -> list[list[float]]:
        """One batch's vectors, embedded on the text the store indexes (with document name and title)."""
        return await self._embedder.embed_passages([indexed_text(name, p.title, p.content) for p in batch])

    async def _store_version(
        self, points: Sequence[ParagraphPoint], row: Document, existing: Document | None
    ) -> Document:
        """Write the new version's points, drop the old version's, and catalog it last, so a
        failure leaves no half-ingested document.

        New points come first, then the stale ones go: the old version stays searchable until
        the new one is complete, and a failure removes only what this call added."""
        try:
            await self._store.upsert(points)
            if existing is not None:
                await self._store.delete_document(row.dataset_id, row.id, keep_ids={p.id for p in points})
            return await self._catalog.save_document(row)
        except BaseException:
            if existing is None:
                await self._store.delete_document(row.dataset_id, row.id)
            raise

    async def delete_document(self, dataset_id: str, document_id: str) -> None:
        await self._catalog.delete_document(dataset_id, document_id)
        await self._store.delete_document(dataset_id, document_id)

    async def delete_dataset(self, dataset_id: str) -> None:
        await self._catalog.delete_dataset(dataset_id)
        await self._store.delete_dataset(dataset_id)


def _points(
    dataset_id: str,
    document_id: str,
    name: str,
    paragraphs: Sequence[SplitParagraph],
    vectors: Sequence[Sequence[float]],
) -> list[ParagraphPoint]:
    """The store's points of one document version, in paragraph order, with ids from their content."""
    return [
        ParagraphPoint(
            id=paragraph_id(document_id, position, p.content),
            dataset_id=dataset_id,
            document_id=document_id,
            document_name=name,
            title=p.title,
            content=p.content,
            position=position,
            vector=vector,
        )
        for position, (p, vector) in enumerate(zip(paragraphs, vectors, strict=True))
    ]


def _catalog_row(
    document_id: str,
    dataset_id: str,
    name: str,
    digest: str,
    paragraphs: Sequence[SplitParagraph],
    existing: Document | None,
) -> Document:
    """The document's catalog row; a new version keeps the first version's creation time."""
    return Document(
        id=document_id,
        dataset_id=dataset_id,
        name=name,
        content_hash=digest,
        paragraph_count=len(paragraphs),
        char_length=sum(len(p.content) for p in paragraphs),
        **({"created_at": existing.created_at} if existing is not None else {}),
    )
