"""Paragraphs an operator manages: list, add, edit (re-embedded), disable/enable, delete.

They are the points of the document's served version in the vector store, which stays the one
home of a paragraph's text; the catalog row keeps the document's counts in step. Changes are
refused while the document has a job queued or running, because the version that job
publishes would silently drop them.

Each change adds its audit row (``kbcore.db.audit``; docs/access.md) in the transaction that
keeps the document's counts, after the store has taken it: the row names the paragraph by id and
title and the fields that changed, never the text.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.audit import record_action
from kbcore.db.tables import Document
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.limits import MAX_PARAGRAPH_CONTENT_CHARS, MAX_PARAGRAPH_PAGE_SIZE, MAX_PARAGRAPH_TITLE_CHARS
from kbcore.paging import checked_page
from kbcore.words.said import said
from services.retrieval.embedding.spaces import EmbeddingSpaces, Space
from services.retrieval.ingestion.jobs.queue import JobQueue
from services.retrieval.ingestion.jobs.states import ACTIVE
from services.retrieval.ingestion.splitter import SplitParagraph
from services.retrieval.ingestion.version_build import VersionBuilder, VersionTarget, version_point
from services.retrieval.store.base import StoredParagraph


@dataclass(frozen=True)
class ParagraphChange:
    """Fields to change; None leaves a field as it is."""

    title: str | None = None
    content: str | None = None
    enabled: bool | None = None


@dataclass(frozen=True)
class _Audited:
    """One paragraph change as the audit trail names it, with what it does to the document's counts."""

    action: str
    paragraph_id: str
    title: str
    paragraphs: int = 0  # added to the document's paragraph count
    chars: int = 0  # added to its character count
    detail: str = ""


class ParagraphEditor:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], queue: JobQueue, spaces: EmbeddingSpaces) -> None:
        self._sessions = sessions
        self._queue = queue
        self._spaces = spaces  # each dataset's paragraphs live in its embedding model's store

    async def page(self, dataset_id: str, document_id: str, page: int, size: int) -> tuple[list[StoredParagraph], int]:
        checked_page(page, size, MAX_PARAGRAPH_PAGE_SIZE)
        document, _ = await self._queue.document(dataset_id, document_id)
        if not document.active_version and document.paragraph_count == 0:
            return [], 0
        store = (await self._spaces.served(dataset_id)).store
        paragraphs = await store.document_paragraphs(dataset_id, document_id, document.active_version)
        start = (page - 1) * size
        return paragraphs[start : start + size], len(paragraphs)

    async def add(self, dataset_id: str, document_id: str, title: str, content: str) -> StoredParagraph:
        target, space = await self._editable(dataset_id, document_id)
        paragraph = _checked(title, content)
        served = await space.store.document_paragraphs(dataset_id, document_id, target.version)
        position = max((p.position for p in served), default=-1) + 1
        vector = await _builder(space).embed_one(target.document_name, paragraph.title, paragraph.content)
        point_id = str(uuid.uuid4())
        await space.store.upsert([version_point(target, point_id, position, paragraph, vector, searchable=True)])
        await self._settle(document_id, _Audited("paragraph.add", point_id, paragraph.title, 1, len(paragraph.content)))
        return await self._require(space, dataset_id, document_id, point_id)

    async def update(
        self, dataset_id: str, document_id: str, paragraph_id: str, change: ParagraphChange
    ) -> StoredParagraph:
        target, space = await self._editable(dataset_id, document_id)
        current = await self._require(space, dataset_id, document_id, paragraph_id, target.version)
        enabled = current.enabled if change.enabled is None else change.enabled
        edited = SplitParagraph(current.title, current.content)
        if change.title is not None or change.content is not None:
            edited = _checked(
                current.title if change.title is None else change.title,
                current.content if change.content is None else change.content,
            )
            vector = await _builder(space).embed_one(target.document_name, edited.title, edited.content)
            point = version_point(
                target, paragraph_id, current.position, edited, vector, searchable=True, enabled=enabled
            )
            await space.store.upsert([point])
        elif enabled != current.enabled:
            await space.store.set_enabled(dataset_id, [paragraph_id], enabled)
        changed = _changed_fields(current, edited, enabled)
        if changed:
            chars = len(edited.content) - len(current.content)
            audited = _Audited("paragraph.update", paragraph_id, edited.title, 0, chars, ", ".join(changed))
            await self._settle(document_id, audited)
        return await self._require(space, dataset_id, document_id, paragraph_id)

    async def delete(self, dataset_id: str, document_id: str, paragraph_id: str) -> None:
        target, space = await self._editable(dataset_id, document_id)
        current = await self._require(space, dataset_id, document_id, paragraph_id, target.version)
        await space.store.delete_points([paragraph_id])
        deleted = _Audited("paragraph.delete", paragraph_id, current.title, -1, -len(current.content))
        await self._settle(document_id, deleted)

    async def _editable(self, dataset_id: str, document_id: str) -> tuple[VersionTarget, Space]:
        document, job = await self._queue.document(dataset_id, document_id)
        if job is not None and job.state in ACTIVE:
            raise Conflict(said("document_being_ingested_paragraphs_can_be", document_name=f"{document.name!r}"))
        if not document.active_version and document.paragraph_count == 0:
            raise Conflict(said("document_has_no_searchable_version_change", document_name=f"{document.name!r}"))
        space = await self._spaces.writable(dataset_id)
        return VersionTarget(dataset_id, document_id, document.name, document.active_version), space

    async def _require(
        self, space: Space, dataset_id: str, document_id: str, paragraph_id: str, version: int | None = None
    ) -> StoredParagraph:
        try:
            uuid.UUID(paragraph_id)
        except ValueError:
            raise NotFound(said("paragraph_does_not_exist", paragraph_id=f"{paragraph_id!r}")) from None
        found = await space.store.paragraph(paragraph_id)
        if (
            found is None
            or found.dataset_id != dataset_id
            or found.document_id != document_id
            or (version is not None and found.version != version)
        ):
            raise NotFound(
                said("paragraph_does_not_exist_document", paragraph_id=paragraph_id, document_id=document_id)
            )
        return found

    async def _settle(self, document_id: str, change: _Audited) -> None:
        """The document's counts follow the change the store has taken, and its audit row is
        added, in one transaction."""
        async with self._sessions.begin() as session:
            document = await session.get(Document, document_id, with_for_update=True)
            if document is not None:
                document.paragraph_count = max(0, document.paragraph_count + change.paragraphs)
                document.char_length = max(0, document.char_length + change.chars)
            detail = f"document {document_id}" + (f": {change.detail}" if change.detail else "")
            record_action(session, change.action, "paragraph", change.paragraph_id, change.title, detail)


def _changed_fields(before: StoredParagraph, after: SplitParagraph, enabled: bool) -> list[str]:
    """The names of the fields an edit changed, as the audit trail lists them (never their text)."""
    fields = (("title", before.title, after.title), ("content", before.content, after.content))
    changed = [name for name, old, new in fields if old != new]
    return changed + (["is_active"] if before.enabled != enabled else [])


def _builder(space: Space) -> VersionBuilder:
    """Embeds an operator's paragraph with its dataset's model, on the text the store indexes."""
    return VersionBuilder(space.store, space.embedder)


def _checked(title: str, content: str) -> SplitParagraph:
    title, content = title.strip(), content.strip()
    if not content:
        raise InvalidRequest(said("paragraph_needs_content"))
    if len(content) > MAX_PARAGRAPH_CONTENT_CHARS:
        raise InvalidRequest(
            said("paragraph_content_limited_characters", max_paragraph_content_chars=MAX_PARAGRAPH_CONTENT_CHARS)
        )
    if len(title) > MAX_PARAGRAPH_TITLE_CHARS:
        raise InvalidRequest(
            said("paragraph_title_limited_characters", max_paragraph_title_chars=MAX_PARAGRAPH_TITLE_CHARS)
        )
    return SplitParagraph(title, content)
