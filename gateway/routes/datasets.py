"""Datasets, documents and the hit test (operator only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from gateway.auth import operator_only
from gateway.backends import Backends, backends, call, last_of, retrieve
from gateway.body_limits import MAX_UPLOAD_BYTES
from gateway.edge_rules import is_json, is_multipart
from gateway.errors import ApiError, ok
from gateway.presenter import (
    DEFAULT_SEARCH_MODE_NAME,
    SEARCH_MODE_SPELLINGS,
    dataset_json,
    document_json,
    paragraph_json,
    retrieval_json,
    search_mode,
)
from kb.common.v1 import common_pb2
from kb.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.limits import DEFAULT_SIMILARITY, DEFAULT_TOP_N, MAX_TOP_N

router = APIRouter(prefix="/api/dataset", tags=["dataset"], dependencies=[Depends(operator_only)])


class DatasetIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    desc: str = Field(default="", max_length=5000)


class ParagraphIn(BaseModel):
    title: str = Field(default="", max_length=500)
    content: str = Field(min_length=1, max_length=100_000)


class DocumentIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    paragraphs: list[ParagraphIn] = Field(min_length=1, max_length=5000)


@router.post("")
async def create_dataset(body: DatasetIn, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    reply = await call(
        b.retrieval.CreateDataset(pb.CreateDatasetRequest(name=body.name, description=body.desc), timeout=b.rpc_timeout)
    )
    return ok(dataset_json(reply.dataset))


@router.get("")
async def list_datasets(b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    reply = await call(b.retrieval.ListDatasets(pb.ListDatasetsRequest(), timeout=b.rpc_timeout))
    return ok([dataset_json(d) for d in reply.datasets])


@router.delete("/{dataset_id}")
async def delete_dataset(dataset_id: str, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    await call(b.retrieval.DeleteDataset(pb.DeleteDatasetRequest(dataset_id=dataset_id), timeout=b.rpc_timeout))
    return ok(True)


async def _add_document(b: Backends, request: pb.AddDocumentRequest) -> dict[str, Any]:
    document = await last_of(b.retrieval.AddDocument(request, timeout=b.ask_timeout), "document", "ingestion")
    return document_json(document)


@router.post("/{dataset_id}/document")
async def add_document(dataset_id: str, request: Request, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    """JSON ``{name, paragraphs:[{title, content}]}``, or multipart with a .md/.txt file in ``file``;
    any other body type is refused, never read as JSON (a page's ``text/plain`` POST planted a
    document this way)."""
    content_type = request.headers.get("content-type", "")
    if not (is_multipart(content_type) or is_json(content_type)):
        raise ApiError(415, "send the document as application/json or as multipart/form-data with a file")
    if is_multipart(content_type):
        form = await request.form()
        upload = form.get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise ApiError(400, "the upload needs a file in the form field 'file'")
        data = await upload.read(MAX_UPLOAD_BYTES + 1)
        if len(data) > MAX_UPLOAD_BYTES:
            raise ApiError(413, f"the file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MiB")
        name = form.get("name")
        grpc_request = pb.AddDocumentRequest(
            dataset_id=dataset_id,
            name=name if isinstance(name, str) else "",
            file=pb.FileContent(filename=upload.filename, data=data),
        )
    else:
        try:
            body = DocumentIn.model_validate_json(await request.body())
        except ValueError as exc:
            raise ApiError(400, f"invalid document body: {exc}") from exc
        grpc_request = pb.AddDocumentRequest(
            dataset_id=dataset_id,
            name=body.name,
            paragraphs=pb.ParagraphList(
                paragraphs=[pb.ParagraphInput(title=p.title, content=p.content) for p in body.paragraphs]
            ),
        )
    return ok(await _add_document(b, grpc_request))


@router.get("/{dataset_id}/document")
async def list_documents(dataset_id: str, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    reply = await call(b.retrieval.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset_id), timeout=b.rpc_timeout))
    return ok([document_json(d) for d in reply.documents])


@router.delete("/{dataset_id}/document/{document_id}")
async def delete_document(dataset_id: str, document_id: str, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    await call(
        b.retrieval.DeleteDocument(
            pb.DeleteDocumentRequest(dataset_id=dataset_id, document_id=document_id), timeout=b.rpc_timeout
        )
    )
    return ok(True)


@dataclass(frozen=True)
class HitTestQuery:
    """The hit test's query string, shared by the single query and the multi-round loop."""

    query_text: str
    settings: common_pb2.SearchSettings


def hit_test_query(
    query_text: Annotated[str, Query(min_length=1, max_length=1000)],
    top_number: Annotated[int, Query(ge=1, le=MAX_TOP_N)] = DEFAULT_TOP_N,
    similarity: Annotated[float, Query(ge=0.0, le=1.0)] = DEFAULT_SIMILARITY,
    search_mode_name: Annotated[
        str, Query(alias="search_mode", pattern=f"^({'|'.join(SEARCH_MODE_SPELLINGS)})$")
    ] = DEFAULT_SEARCH_MODE_NAME,
) -> HitTestQuery:
    if not query_text.strip():
        raise ApiError(400, "query_text must not be blank")
    settings = common_pb2.SearchSettings(
        top_n=top_number, similarity=similarity, search_mode=search_mode(search_mode_name)
    )
    return HitTestQuery(query_text, settings)


@router.get("/{dataset_id}/hit_test")
async def hit_test(
    dataset_id: str, b: Annotated[Backends, Depends(backends)], q: Annotated[HitTestQuery, Depends(hit_test_query)]
) -> JSONResponse:
    reply = await call(
        b.retrieval.Search(
            pb.SearchRequest(dataset_ids=[dataset_id], query=q.query_text, search=q.settings), timeout=b.rpc_timeout
        )
    )
    return ok([paragraph_json(p) for p in reply.paragraphs])


@router.get("/{dataset_id}/hit_test_rounds")
async def hit_test_rounds(
    dataset_id: str, b: Annotated[Backends, Depends(backends)], q: Annotated[HitTestQuery, Depends(hit_test_query)]
) -> JSONResponse:
    """The multi-round loop on one dataset: every round's queries, new paragraphs and verdict."""
    result = await retrieve(b, pb.RetrieveRequest(dataset_ids=[dataset_id], search=q.settings, question=q.query_text))
    return ok(retrieval_json(result))
