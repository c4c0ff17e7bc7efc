"""Building one version of a document in the vector store: embed, write staged, publish.

A version's points are written *staged* (stored, never searched) batch by batch, and made
searchable together by ``publish_version``, which also deletes the document's other versions:
a search sees the old version or the new one, never half of the new one beside the old.
Point ids derive from the document, the version, the position and the text, so a job resumed
after a crash finds the points it already wrote and embeds only the rest. A paragraph the
served version already indexes with the same text is not written again at all: the version
keeps that point (``unchanged``), so a changed upload embeds only what changed.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from services.retrieval.embedding.embedders import Embedder
from services.retrieval.ingestion.jobs.embed_pipeline import embed_in_order
from services.retrieval.ingestion.splitter import SplitParagraph
from services.retrieval.ingestion.unchanged import KeptParagraphs, kept_paragraphs
from services.retrieval.store.base import ParagraphPoint, QuestionPoint, Unchanged, VectorStore
from services.retrieval.store.layout import indexed_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class VersionTarget:
    """Which document version is being built."""

    dataset_id: str
    document_id: str
    document_name: str
    version: int


@dataclass
class Progress:
    """Shared between the builder (which advances it) and the job's reporter (which writes it to
    SQL and brings back whether to go on)."""

    state: str
    done: int = 0
    total: int = 0
    go_on: bool = True
    stopped_by: str = ""  # why go_on turned False (the reporter's word for it)


def paragraph_id(document_id: str, version: int, position: int, content: str) -> str:
    return str(uuid.uuid5(uuid.UUID(document_id), f"{version}:{position}:{content}"))


def point_ids(target: VersionTarget, paragraphs: Sequence[SplitParagraph], kept: KeptParagraphs | None) -> list[str]:
    """Each paragraph's point id in the version: a kept paragraph's own, else derived."""
    held = kept.by_position if kept is not None else {}
    return [
        held[i].id if i in held else paragraph_id(target.document_id, target.version, i, p.content)
        for i, p in enumerate(paragraphs)
    ]


def content_hash(paragraphs: Sequence[SplitParagraph]) -> str:
    digest = hashlib.sha256()
    for p in paragraphs:
        digest.update(p.title.encode() + b"\x1f" + p.content.encode() + b"\x1e")
        if p.questions:  # only then: the hashes of documents without questions stay as they were
            digest.update("\x1d".join(p.questions).encode() + b"\x1e")
    return digest.hexdigest()


class VersionBuilder:
    def __init__(self, store: VectorStore, embedder: Embedder) -> None:
        self._store = store
        self._embedder = embedder

    async def kept(self, target: VersionTarget, paragraphs: Sequence[SplitParagraph]) -> KeptParagraphs:
        """The served paragraphs the version keeps instead of embedding their texts again."""
        served = await self._store.served_paragraphs(target.dataset_id, target.document_id)
        return kept_paragraphs(paragraphs, served, target.document_name, target.version)

    async def stage(
        self,
        target: VersionTarget,
        paragraphs: Sequence[SplitParagraph],
        progress: Progress,
        kept: KeptParagraphs | None = None,
    ) -> bool:
        """Write every point of the version that ``kept`` does not already hold, staged; False
        when told to stop on the way. Kept points, and points a previous attempt wrote, count as
        done. On a full disk it raises StorageFull before embedding anything, or at the batch the
        disk filled up under: the store refuses a write it has no room for, and the job ends
        with the reason (the store drops what it staged once it has room;
        ``VectorStore.drop_version``)."""
        await self._store.check_room()
        held = kept.by_position if kept is not None else {}
        ids = point_ids(target, paragraphs, kept)
        new = [i for i in range(len(ids)) if i not in held]
        stored = await self._store.existing_ids([ids[i] for i in new])
        missing = [i for i in new if ids[i] not in stored]
        progress.done, progress.total = len(ids) - len(missing), len(ids)
        texts = [indexed_text(target.document_name, paragraphs[i].title, paragraphs[i].content) for i in missing]

        async def write(offset: int, vectors: list[list[float]]) -> None:
            batch = missing[offset : offset + len(vectors)]
            await self._store.upsert(
                [
                    version_point(target, ids[i], i, paragraphs[i], v, searchable=False)
                    for i, v in zip(batch, vectors, strict=True)
                ]
            )
            progress.done += len(batch)

        # Batches in flight while earlier ones are written, in order; stops within one batch round.
        return await embed_in_order(self._embedder, texts, write, lambda: progress.go_on)

    async def publish(self, target: VersionTarget, kept: KeptParagraphs | None = None) -> None:
        """Publish the version with the paragraphs it keeps. Every step of a publication can be
        repeated, so a failure (a lost acknowledgement) is met by publishing once more; should
        that fail too, the kept paragraphs go back to the served version before the error is
        raised: the job then fails and drops its own points, and the served version must not
        lose the kept ones with them."""
        unchanged = kept.unchanged() if kept is not None else None
        try:
            await self._publish(target, unchanged)
        except Exception as exc:  # a process stopped here instead resumes the job, which publishes again
            log.warning(
                "publishing version %d of document %s failed (%s); once more", target.version, target.document_id, exc
            )
            try:
                await self._publish(target, unchanged)
            except Exception:
                if kept is not None and kept.by_position:
                    await self._store.restore_served(
                        target.dataset_id, target.document_id, target.version, list(kept.by_position.values())
                    )
                raise

    async def attach_questions(
        self, target: VersionTarget, paragraphs: Sequence[SplitParagraph], kept: KeptParagraphs | None = None
    ) -> int:
        """Attach the questions the source gave its paragraphs (a QA spreadsheet's 问题 column)
        to the published version; those a paragraph already has (a kept one) are not added
        twice. Returns how many were attached. Called once the version is served: a question
        attached to a staged paragraph would be removed as an orphan by the publication."""
        ids = point_ids(target, paragraphs, kept)
        wanted = list(dict.fromkeys((ids[i], q) for i, p in enumerate(paragraphs) for q in p.questions))
        if not wanted:
            return 0
        served = await self._store.questions(target.dataset_id, document_id=target.document_id)
        have = {(q.paragraph_id, q.content) for q in served}
        new = [(pid, q) for pid, q in wanted if (pid, q) not in have]
        points = [
            QuestionPoint(
                id=str(uuid.uuid5(uuid.UUID(pid), f"question:{question}")),
                dataset_id=target.dataset_id,
                document_id=target.document_id,
                paragraph_id=pid,
                content=question,
                vector=await self._embedder.embed_query(question),
            )
            for pid, question in new
        ]
        await self._store.upsert_questions(points)
        return len(points)

    async def _publish(self, target: VersionTarget, unchanged: Unchanged | None) -> None:
        await self._store.publish_version(target.dataset_id, target.document_id, target.version, unchanged)

    async def drop(self, target: VersionTarget) -> None:
        await self._store.drop_version(target.dataset_id, target.document_id, target.version)

    async def is_intact(self, dataset_id: str, document_id: str, paragraph_count: int) -> bool:
        """The served version still has all its points: a vector store that was reset must not be
        trusted blindly, so an unchanged upload is indexed again when its points are gone."""
        return paragraph_count > 0 and await self._store.count(dataset_id, document_id) == paragraph_count

    async def embed_one(self, document_name: str, title: str, content: str) -> list[float]:
        """The vector of one paragraph an operator wrote or edited, on the text the store indexes."""
        return (await self._embedder.embed_passages([indexed_text(document_name, title, content)]))[0]


def version_point(
    target: VersionTarget,
    point_id: str,
    position: int,
    paragraph: SplitParagraph,
    vector: Sequence[float],
    *,
    searchable: bool,
    enabled: bool = True,
) -> ParagraphPoint:
    """One paragraph of the version: staged while a job builds it (not searchable), or written by
    an operator into the served version (searchable unless disabled)."""
    return ParagraphPoint(
        id=point_id,
        dataset_id=target.dataset_id,
        document_id=target.document_id,
        document_name=target.document_name,
        title=paragraph.title,
        content=paragraph.content,
        position=position,
        vector=vector,
        version=target.version,
        searchable=searchable,
        enabled=enabled,
    )
