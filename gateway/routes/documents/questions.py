"""Questions attached to paragraphs (MaxKB's "problems", apps/dataset/urls.py): a paragraph's
questions listed and attached, one detached from it (MaxKB's ``un_association``), edited or
deleted by id under the dataset, and a whole document's listed for the operator page.

A question is 1..256 characters (MaxKB's limit; ``kbcore.limits``) and a paragraph has at most
100: both checked here before the retrieval service does any work, and again there. Included by
``gateway.routes.datasets`` under its prefix (who may call which: ``kbcore.permissions.table``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, StringConstraints, field_validator

from gateway.backends import CallerBackend
from gateway.errors import ok
from gateway.shapes.datasets import AttachedQuestionOut
from gateway.shapes.envelope import Envelope
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.limits import MAX_QUESTION_CHARS
from kbcore.words.said import said

QuestionText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_QUESTION_CHARS)]

router = APIRouter(prefix="/{dataset_id}")


class QuestionIn(BaseModel):
    content: QuestionText

    @field_validator("content")
    @classmethod
    def _not_blank(cls, content: str) -> str:
        if not content.strip():
            raise ValueError(said("question_needs_some_text"))
        return content


def question_json(q: pb.AttachedQuestion) -> dict[str, Any]:
    """MaxKB's problem fields, and the paragraph and document it is attached to."""
    return {
        "id": q.id,
        "content": q.content,
        "dataset_id": q.dataset_id,
        "document_id": q.document_id,
        "paragraph_id": q.paragraph_id,
    }


@router.get("/document/{document_id}/problem", response_model=Envelope[list[AttachedQuestionOut]])
async def document_questions(dataset_id: str, document_id: str, backend: CallerBackend) -> JSONResponse:
    """Every question attached to the document's paragraphs, by paragraph."""
    reply = await backend.unary(
        backend.retrieval.paragraphs.ListQuestions,
        pb.ListQuestionsRequest(dataset_id=dataset_id, document_id=document_id),
    )
    return ok([question_json(q) for q in reply.questions])


@router.get(
    "/document/{document_id}/paragraph/{paragraph_id}/problem", response_model=Envelope[list[AttachedQuestionOut]]
)
async def paragraph_questions(
    dataset_id: str, document_id: str, paragraph_id: str, backend: CallerBackend
) -> JSONResponse:
    reply = await backend.unary(
        backend.retrieval.paragraphs.ListQuestions,
        pb.ListQuestionsRequest(dataset_id=dataset_id, document_id=document_id, paragraph_id=paragraph_id),
    )
    return ok([question_json(q) for q in reply.questions])


@router.post("/document/{document_id}/paragraph/{paragraph_id}/problem", response_model=Envelope[AttachedQuestionOut])
async def attach_question(
    dataset_id: str, document_id: str, paragraph_id: str, body: QuestionIn, backend: CallerBackend
) -> JSONResponse:
    """Searchable once this answers; a question the paragraph already has is returned as it is."""
    question = await backend.unary(
        backend.retrieval.paragraphs.AttachQuestion,
        pb.AttachQuestionRequest(
            dataset_id=dataset_id, document_id=document_id, paragraph_id=paragraph_id, content=body.content
        ),
    )
    return ok(question_json(question))


@router.put(
    "/document/{document_id}/paragraph/{paragraph_id}/problem/{problem_id}/un_association",
    response_model=Envelope[bool],
)
async def detach_question(
    dataset_id: str, document_id: str, paragraph_id: str, problem_id: str, backend: CallerBackend
) -> JSONResponse:
    """MaxKB keeps an unlinked problem in the dataset's list; a question here belongs to one
    paragraph, so detaching it deletes it."""
    await backend.unary(
        backend.retrieval.paragraphs.DetachQuestion,
        pb.DetachQuestionRequest(dataset_id=dataset_id, question_id=problem_id),
    )
    return ok(True)


@router.put("/problem/{problem_id}", response_model=Envelope[AttachedQuestionOut])
async def edit_question(dataset_id: str, problem_id: str, body: QuestionIn, backend: CallerBackend) -> JSONResponse:
    question = await backend.unary(
        backend.retrieval.paragraphs.UpdateQuestion,
        pb.UpdateQuestionRequest(dataset_id=dataset_id, question_id=problem_id, content=body.content),
    )
    return ok(question_json(question))


@router.delete("/problem/{problem_id}", response_model=Envelope[bool])
async def delete_question(dataset_id: str, problem_id: str, backend: CallerBackend) -> JSONResponse:
    await backend.unary(
        backend.retrieval.paragraphs.DetachQuestion,
        pb.DetachQuestionRequest(dataset_id=dataset_id, question_id=problem_id),
    )
    return ok(True)
