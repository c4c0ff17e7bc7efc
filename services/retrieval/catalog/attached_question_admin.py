"""Questions an operator attaches to paragraphs: listed, attached, edited, detached.

A question lives beside its paragraph in the vector store, embedded as a query is, so a
visitor asking it in nearly the same words finds the paragraph (``search.attached_questions``).
It belongs to the paragraph's id: a new version of the document that keeps the paragraph keeps
its questions, and deleting the paragraph or its document deletes them (``store.layout``).

Only a paragraph of the served version takes questions; a job running on the document does not
stop it (if the job's version keeps the paragraph, it keeps its questions too). Each change
adds its audit row naming the question by id and its paragraph, never the question's text.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.audit import record_action
from kbcore.db.tables import Document
from kbcore.errors import InvalidRequest, NotFound
from kbcore.limits import MAX_QUESTION_CHARS, MAX_QUESTIONS_PER_PARAGRAPH
from kbcore.words.said import said
from services.retrieval.embedding.spaces import EmbeddingSpaces, Space
from services.retrieval.ingestion.jobs.queue import JobQueue
from services.retrieval.store.base import AttachedQuestion, QuestionPoint, StoredParagraph, VectorStore


class AttachedQuestionAdmin:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], queue: JobQueue, spaces: EmbeddingSpaces) -> None:
        self._sessions = sessions
        self._queue = queue
        self._spaces = spaces  # a dataset's questions live in its embedding model's store, as its paragraphs

    async def listed(self, dataset_id: str, document_id: str, paragraph_id: str = "") -> list[AttachedQuestion]:
        """One paragraph's questions, or the whole document's when ``paragraph_id`` is empty."""
        document, _ = await self._queue.document(dataset_id, document_id)  # NotFound for an unknown one
        store = (await self._spaces.served(dataset_id)).store
        if not paragraph_id:
            return await store.questions(dataset_id, document_id=document_id)
        paragraph = await _served_paragraph(store, document, paragraph_id)
        return await store.questions(dataset_id, paragraph_ids=[paragraph.id])

    async def attach(self, dataset_id: str, document_id: str, paragraph_id: str, content: str) -> AttachedQuestion:
        text = checked_question(content)
        document, _ = await self._queue.document(dataset_id, document_id)
        space = await self._spaces.writable(dataset_id)
        paragraph = await _served_paragraph(space.store, document, paragraph_id)
        attached = await space.store.questions(dataset_id, paragraph_ids=[paragraph.id])
        same = next((q for q in attached if q.content == text), None)
        if same is not None:
            return same
        if len(attached) >= MAX_QUESTIONS_PER_PARAGRAPH:
            raise InvalidRequest(
                said(
                    "paragraph_already_has_questions_most_one", max_questions_per_paragraph=MAX_QUESTIONS_PER_PARAGRAPH
                )
            )
        question = QuestionPoint(
            id=str(uuid.uuid4()),
            dataset_id=dataset_id,
            document_id=document_id,
            paragraph_id=paragraph.id,
            content=text,
            vector=await space.embedder.embed_query(text),
        )
        await space.store.upsert_questions([question])
        await self._audit("question.attach", question.id, paragraph)
        return _as_attached(question)

    async def update(self, dataset_id: str, question_id: str, content: str) -> AttachedQuestion:
        text = checked_question(content)
        space = await self._spaces.writable(dataset_id)
        current = await _question(space, dataset_id, question_id)
        if current.content == text:
            return current
        edited = QuestionPoint(
            id=current.id,
            dataset_id=dataset_id,
            document_id=current.document_id,
            paragraph_id=current.paragraph_id,
            content=text,
            vector=await space.embedder.embed_query(text),
        )
        await space.store.upsert_questions([edited])
        paragraph = await space.store.paragraph(current.paragraph_id)
        await self._audit("question.update", current.id, paragraph)
        return _as_attached(edited)

    async def detach(self, dataset_id: str, question_id: str) -> None:
        space = await self._spaces.writable(dataset_id)
        current = await _question(space, dataset_id, question_id)
        await space.store.delete_points([current.id])
        await self._audit("question.detach", current.id, await space.store.paragraph(current.paragraph_id))

    async def _audit(self, action: str, question_id: str, paragraph: StoredParagraph | None) -> None:
        detail = f"paragraph {paragraph.id} of document {paragraph.document_id}" if paragraph else ""
        async with self._sessions.begin() as session:
            record_action(session, action, "question", question_id, paragraph.title if paragraph else "", detail)


def checked_question(content: str) -> str:
    """The question as stored: trimmed, one line, not empty, within the length limit."""
    text = " ".join(content.split())
    if not text:
        raise InvalidRequest(said("question_needs_some_text"))
    if len(text) > MAX_QUESTION_CHARS:
        raise InvalidRequest(
            said("question_limited_characters_one_has", max_question_chars=MAX_QUESTION_CHARS, len_text=len(text))
        )
    return text


async def _served_paragraph(store: VectorStore, document: Document, paragraph_id: str) -> StoredParagraph:
    """The paragraph, if it is one of the document's served version (NotFound otherwise): a
    staged paragraph may never be published, and its questions would go with it."""
    found = await store.paragraph(paragraph_id)
    if (
        found is None
        or found.dataset_id != document.dataset_id
        or found.document_id != document.id
        or found.version != document.active_version
    ):
        raise NotFound(
            said("paragraph_does_not_exist_document", paragraph_id=f"{paragraph_id!r}", document_id=document.id)
        )
    return found


async def _question(space: Space, dataset_id: str, question_id: str) -> AttachedQuestion:
    try:
        canonical = str(uuid.UUID(question_id))
    except ValueError:
        raise NotFound(said("question_does_not_exist", question_id=f"{question_id!r}")) from None
    found = await space.store.questions(dataset_id, question_ids=[canonical])
    if not found:
        raise NotFound(said("question_does_not_exist_dataset", question_id=f"{question_id!r}"))
    return found[0]


def _as_attached(question: QuestionPoint) -> AttachedQuestion:
    return AttachedQuestion(
        question.id, question.dataset_id, question.document_id, question.paragraph_id, question.content
    )
