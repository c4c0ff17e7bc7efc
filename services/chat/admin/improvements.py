"""Improving an answer: the corrected answer, with its question as the title, becomes a paragraph
of a dataset the operator chooses, searchable as soon as the call returns, with the visitor's
question attached to it; the record keeps the paragraph's id.

The paragraphs live in one document per dataset, named ``IMPROVED_DOCUMENT`` (MaxKB asks the
operator for a document too; here it is chosen for them, so corrections are found in one place
and can be reviewed together). The retrieval service owns paragraphs, so they are written
through its RPCs: ``AddParagraph`` into the document, or ``AddDocument`` with the first paragraph
when the dataset has no such document yet.
"""

from __future__ import annotations

import logging

import grpc
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.db.audit import current_actor, record_action
from kbcore.db.tables import ChatRecord
from kbcore.errors import InvalidRequest, NotFound, Unavailable
from kbcore.limits import MAX_PARAGRAPH_CONTENT_CHARS, MAX_PARAGRAPH_TITLE_CHARS, MAX_QUESTION_CHARS
from kbcore.permissions.roles import Principal
from kbcore.permissions.wire import address_metadata, principal_metadata
from kbcore.rpc.error_mapping import from_upstream
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.words.said import said

log = logging.getLogger(__name__)

IMPROVED_DOCUMENT = "改进的回答"


def paragraph_text(question: str, answer: str, record_question: str) -> tuple[str, str]:
    """The paragraph's title and content, checked: an empty question is the record's (clipped
    to a title's length, since a question may be longer than a title)."""
    content = answer.strip()
    if not content:
        raise InvalidRequest(said("answer_must_not_be_empty_corrected"))
    if len(content) > MAX_PARAGRAPH_CONTENT_CHARS:
        raise InvalidRequest(said("answer_longer_characters", max_paragraph_content_chars=MAX_PARAGRAPH_CONTENT_CHARS))
    title = question.strip()
    if len(title) > MAX_PARAGRAPH_TITLE_CHARS:
        raise InvalidRequest(said("question_longer_characters", max_paragraph_title_chars=MAX_PARAGRAPH_TITLE_CHARS))
    return title or record_question.strip()[:MAX_PARAGRAPH_TITLE_CHARS], content


def on_behalf_of(principal: Principal) -> tuple[tuple[str, str | bytes], ...]:
    """Call metadata that makes the retrieval service write the paragraph as ``principal``'s,
    from the client's address: its audit trail then names the person, not the chat service."""
    return (*principal_metadata(principal), *address_metadata(current_actor().address))


class Improver:
    def __init__(
        self, retrieval: RetrievalStubs, timeout: float, metadata: tuple[tuple[str, str | bytes], ...] = ()
    ) -> None:
        """``metadata``: whom the calls act for (``on_behalf_of``); none, the service itself."""
        self._retrieval = retrieval
        self._timeout = timeout
        self._metadata = metadata

    async def write(self, dataset_id: str, title: str, content: str, asked: str = "") -> tuple[str, str]:
        """The new paragraph's document id and paragraph id; ``asked``, the visitor's question as
        they typed it, is attached to the paragraph, so the same wording finds it again."""
        try:
            document_id = await self._document(dataset_id)
            if document_id is None:
                document_id, paragraph_id = await self._create(dataset_id, title, content)
            else:
                added = await self._retrieval.paragraphs.AddParagraph(
                    retrieval_pb.AddParagraphRequest(
                        dataset_id=dataset_id, document_id=document_id, title=title, content=content
                    ),
                    timeout=self._timeout,
                    metadata=self._metadata,
                )
                paragraph_id = added.id
        except grpc.aio.AioRpcError as error:
            raise _refusal(error, dataset_id) from None
        await self._attach(dataset_id, document_id, paragraph_id, asked)
        return document_id, paragraph_id

    async def _attach(self, dataset_id: str, document_id: str, paragraph_id: str, asked: str) -> None:
        """Best effort: the paragraph is written and found by its title already; a question that
        could not be attached is logged, not a failed improvement."""
        question = " ".join(asked.split())[:MAX_QUESTION_CHARS]
        if not question:
            return
        request = retrieval_pb.AttachQuestionRequest(
            dataset_id=dataset_id, document_id=document_id, paragraph_id=paragraph_id, content=question
        )
        try:
            await self._retrieval.paragraphs.AttachQuestion(request, timeout=self._timeout, metadata=self._metadata)
        except grpc.aio.AioRpcError as error:
            log.warning("the improved paragraph %s was written without its question: %s", paragraph_id, error.details())

    async def _document(self, dataset_id: str) -> str | None:
        listed = await self._retrieval.documents.ListDocuments(
            retrieval_pb.ListDocumentsRequest(dataset_id=dataset_id), timeout=self._timeout, metadata=self._metadata
        )
        named = [d for d in listed.documents if d.name == IMPROVED_DOCUMENT]
        return min(named, key=lambda d: d.created_at).id if named else None

    async def _create(self, dataset_id: str, title: str, content: str) -> tuple[str, str]:
        request = retrieval_pb.AddDocumentRequest(
            dataset_id=dataset_id,
            name=IMPROVED_DOCUMENT,
            paragraphs=retrieval_pb.ParagraphList(
                paragraphs=[retrieval_pb.ParagraphInput(title=title, content=content)]
            ),
        )
        document_id = ""
        async for event in self._retrieval.documents.AddDocument(
            request, timeout=self._timeout, metadata=self._metadata
        ):
            if event.HasField("document"):
                document_id = event.document.id
        if not document_id:
            raise Unavailable(said("dataset_did_not_confirm_new_document"))
        page = await self._retrieval.paragraphs.ListParagraphs(
            retrieval_pb.ListParagraphsRequest(dataset_id=dataset_id, document_id=document_id, page=1, page_size=1),
            timeout=self._timeout,
            metadata=self._metadata,
        )
        return document_id, page.paragraphs[0].id


def _refusal(error: grpc.aio.AioRpcError, dataset_id: str) -> Exception:
    """The retrieval service's refusal as the operator reads it: a missing dataset in words that
    say which choice to change, anything else by the rule every service passes refusals on by."""
    if error.code() == grpc.StatusCode.NOT_FOUND:
        return NotFound(said("dataset_does_not_exist_may_have", dataset_id=dataset_id))
    return from_upstream(error, said("retrieval_service_could_not_write_paragraph_2"))


async def link_paragraph(
    sessions: async_sessionmaker[AsyncSession], record_id: int, dataset_id: str, paragraph_id: str
) -> None:
    """Append the paragraph to the record's list (read and written in one transaction), with the
    audit row ``record.improve``: the paragraph itself is the retrieval service's to record."""
    async with sessions.begin() as session:
        record = (await session.scalars(select(ChatRecord).where(ChatRecord.id == record_id).with_for_update())).one()
        record.improved_paragraph_ids = [*(record.improved_paragraph_ids or []), paragraph_id]
        detail = f"dataset {dataset_id}, paragraph {paragraph_id}, chat {record.chat_id}"
        record_action(session, "record.improve", "record", str(record_id), detail=detail)
