"""ParagraphService: a document's paragraphs listed, added, edited and deleted by hand, and
the questions attached to them, translated to and from the paragraph editor and the
attached-question admin (``catalog.attached_question_admin``)."""

from __future__ import annotations

import services.retrieval.retrieval_messages as convert
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from grpc_stubs.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from kbcore.rpc.error_mapping import Context, unary_errors
from services.retrieval.catalog.attached_question_admin import AttachedQuestionAdmin
from services.retrieval.catalog.paragraph_editor import ParagraphChange, ParagraphEditor


class ParagraphRpcs(pb_grpc.ParagraphServiceServicer):
    def __init__(self, paragraphs: ParagraphEditor, questions: AttachedQuestionAdmin):
        self._paragraphs = paragraphs
        self._questions = questions

    @unary_errors
    async def ListParagraphs(self, request: pb.ListParagraphsRequest, context: Context) -> pb.ListParagraphsResponse:
        found, total = await self._paragraphs.page(
            request.dataset_id, request.document_id, request.page, request.page_size
        )
        return pb.ListParagraphsResponse(paragraphs=[convert.managed_paragraph(p) for p in found], total=total)

    @unary_errors
    async def AddParagraph(self, request: pb.AddParagraphRequest, context: Context) -> pb.ManagedParagraph:
        added = await self._paragraphs.add(request.dataset_id, request.document_id, request.title, request.content)
        return convert.managed_paragraph(added)

    @unary_errors
    async def UpdateParagraph(self, request: pb.UpdateParagraphRequest, context: Context) -> pb.ManagedParagraph:
        change = ParagraphChange(
            title=request.title if request.HasField("title") else None,
            content=request.content if request.HasField("content") else None,
            enabled=request.enabled if request.HasField("enabled") else None,
        )
        updated = await self._paragraphs.update(request.dataset_id, request.document_id, request.paragraph_id, change)
        return convert.managed_paragraph(updated)

    @unary_errors
    async def DeleteParagraph(self, request: pb.DeleteParagraphRequest, context: Context) -> pb.DeleteParagraphResponse:
        await self._paragraphs.delete(request.dataset_id, request.document_id, request.paragraph_id)
        return pb.DeleteParagraphResponse()

    @unary_errors
    async def ListQuestions(self, request: pb.ListQuestionsRequest, context: Context) -> pb.ListQuestionsResponse:
        found = await self._questions.listed(request.dataset_id, request.document_id, request.paragraph_id)
        return pb.ListQuestionsResponse(questions=[convert.attached_question(q) for q in found])

    @unary_errors
    async def AttachQuestion(self, request: pb.AttachQuestionRequest, context: Context) -> pb.AttachedQuestion:
        attached = await self._questions.attach(
            request.dataset_id, request.document_id, request.paragraph_id, request.content
        )
        return convert.attached_question(attached)

    @unary_errors
    async def UpdateQuestion(self, request: pb.UpdateQuestionRequest, context: Context) -> pb.AttachedQuestion:
        updated = await self._questions.update(request.dataset_id, request.question_id, request.content)
        return convert.attached_question(updated)

    @unary_errors
    async def DetachQuestion(self, request: pb.DetachQuestionRequest, context: Context) -> pb.DetachQuestionResponse:
        await self._questions.detach(request.dataset_id, request.question_id)
        return pb.DetachQuestionResponse()
