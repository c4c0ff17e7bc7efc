"""A document's paragraphs as an operator manages them (MaxKB v1's routes and shapes,
apps/dataset/urls.py and serializers/paragraph_serializers.py): a page of them, add one, edit
its title, content or ``is_active``, delete one.

Every limit is checked here, before the retrieval service does any work: page ≥ 1, page size
1..200, a title of at most 256 characters (MaxKB's) and content of 1..4096 (MaxKB's documented
limit; ``kbcore.limits`` holds the numbers the retrieval service checks too). Included by ``gateway.routes.datasets`` under its
prefix (who may call which: ``kbcore.permissions.table``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, StringConstraints, model_validator

from gateway.backends import CallerBackend
from gateway.errors import ok
from gateway.presenter import managed_paragraph_out, paragraph_page_out
from gateway.shapes.datasets import ManagedParagraphOut, ParagraphPageOut
from gateway.shapes.envelope import Envelope
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.limits import MAX_PAGE, MAX_PARAGRAPH_CONTENT_CHARS, MAX_PARAGRAPH_PAGE_SIZE, MAX_PARAGRAPH_TITLE_CHARS
from kbcore.words.said import said

ParagraphTitle = Annotated[str, StringConstraints(max_length=MAX_PARAGRAPH_TITLE_CHARS)]
ParagraphContent = Annotated[str, StringConstraints(min_length=1, max_length=MAX_PARAGRAPH_CONTENT_CHARS)]
PageNumber = Annotated[int, Path(ge=1, le=MAX_PAGE)]
PageSize = Annotated[int, Path(ge=1, le=MAX_PARAGRAPH_PAGE_SIZE)]

router = APIRouter(prefix="/{dataset_id}/document/{document_id}/paragraph")


class NewParagraphIn(BaseModel):
    title: ParagraphTitle = ""
    content: ParagraphContent

    @model_validator(mode="after")
    def _content_not_blank(self) -> NewParagraphIn:
        if not self.content.strip():
            raise ValueError(said("content_must_not_be_blank"))
        return self


class ParagraphEditIn(BaseModel):
    """Only the fields sent change (MaxKB's edit): title and content are re-embedded,
    ``is_active`` false hides the paragraph from every search without deleting it."""

    title: ParagraphTitle | None = None
    content: ParagraphContent | None = None
    is_active: bool | None = None

    @model_validator(mode="after")
    def _something_to_change(self) -> ParagraphEditIn:
        if self.title is None and self.content is None and self.is_active is None:
            raise ValueError(said("send_least_one_title_content_active"))
        if self.content is not None and not self.content.strip():
            raise ValueError(said("content_must_not_be_blank"))
        return self


@router.get("/{current_page}/{page_size}", response_model=Envelope[ParagraphPageOut])
async def list_paragraphs(
    dataset_id: str, document_id: str, current_page: PageNumber, page_size: PageSize, backend: CallerBackend
) -> JSONResponse:
    """``{records, total, current, size}``, in the document's order."""
    reply = await backend.unary(
        backend.retrieval.paragraphs.ListParagraphs,
        pb.ListParagraphsRequest(
            dataset_id=dataset_id, document_id=document_id, page=current_page, page_size=page_size
        ),
    )
    return ok(paragraph_page_out(reply, current_page, page_size).wire())


@router.post("", response_model=Envelope[ManagedParagraphOut])
async def add_paragraph(
    dataset_id: str, document_id: str, body: NewParagraphIn, backend: CallerBackend
) -> JSONResponse:
    """A paragraph written by hand, embedded and searchable once this answers."""
    paragraph = await backend.unary(
        backend.retrieval.paragraphs.AddParagraph,
        pb.AddParagraphRequest(dataset_id=dataset_id, document_id=document_id, title=body.title, content=body.content),
    )
    return ok(managed_paragraph_out(paragraph).wire())


@router.put("/{paragraph_id}", response_model=Envelope[ManagedParagraphOut])
async def edit_paragraph(
    dataset_id: str, document_id: str, paragraph_id: str, body: ParagraphEditIn, backend: CallerBackend
) -> JSONResponse:
    request = pb.UpdateParagraphRequest(dataset_id=dataset_id, document_id=document_id, paragraph_id=paragraph_id)
    if body.title is not None:
        request.title = body.title
    if body.content is not None:
        request.content = body.content
    if body.is_active is not None:
        request.enabled = body.is_active
    paragraph = await backend.unary(backend.retrieval.paragraphs.UpdateParagraph, request)
    return ok(managed_paragraph_out(paragraph).wire())


@router.delete("/{paragraph_id}", response_model=Envelope[bool])
async def delete_paragraph(
    dataset_id: str, document_id: str, paragraph_id: str, backend: CallerBackend
) -> JSONResponse:
    await backend.unary(
        backend.retrieval.paragraphs.DeleteParagraph,
        pb.DeleteParagraphRequest(dataset_id=dataset_id, document_id=document_id, paragraph_id=paragraph_id),
    )
    return ok(True)
