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
        await self._catalog.get_dataset(dataset_id)
        if not paragraphs:
            raise ValueError("the document has no text to index")
        if len(paragraphs) > MAX_PARAGRAPHS_PER_DOCUMENT:
            raise ValueError(
                f"the document has {len(paragraphs)} paragraphs; the limit is {MAX_PARAGRAPHS_PER_DOCUMENT}"
            )
        digest = content_hash(paragraphs)
        existing = await self._catalog.find_document(dataset_id, name)
        if (
            existing is not None
            and existing.content_hash == digest
            and await self._store.count(dataset_id, existing.id) == existing.paragraph_count
        ):  # unchanged, and its points are all there (a reset vector store must not be trusted blindly)
            yield IngestProgress(len(paragraphs), len(paragraphs))
            yield existing
            return
        document_id = existing.id if existing is not None else new_id()
        total = len(paragraphs)
        yield IngestProgress(0, total)
        vectors: list[Sequence[float]] = []
        for start in range(0, total, EMBED_BATCH):
            batch = paragraphs[start : start + EMBED_BATCH]
            vectors.extend(await self._embedder.embed_passages([indexed_text(name, p.title, p.content) for p in batch]))
            yield IngestProgress(len(vectors), total)
        points = [
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
        try:
            # New points first, then the stale ones: the old version stays searchable until
            # the new one is complete, and a failure below removes only what this call added.
            await self._store.upsert(points)
            if existing is not None:
                await self._store.delete_document(dataset_id, document_id, keep_ids={p.id for p in points})
            document = await self._catalog.save_document(
                Document(
                    id=document_id,
                    dataset_id=dataset_id,
                    name=name,
                    content_hash=digest,
                    paragraph_count=total,
                    char_length=sum(len(p.content) for p in paragraphs),
                    **({"created_at": existing.created_at} if existing is not None else {}),
                )
            )
        except BaseException:
            if existing is None:
                await self._store.delete_document(dataset_id, document_id)
            raise
        yield document

    async def delete_document(self, dataset_id: str, document_id: str) -> None:
        await self._catalog.delete_document(dataset_id, document_id)
        await self._store.delete_document(dataset_id, document_id)

    async def delete_dataset(self, dataset_id: str) -> None:
        await self._catalog.delete_dataset(dataset_id)
        await self._store.delete_dataset(dataset_id)
