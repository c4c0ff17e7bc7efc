"""Datasets, documents and the hit test (operator only)."""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.datastructures import UploadFile

from gateway.auth import require_operator
from gateway.backends import Backends, call
from gateway.errors import ApiError, ok
from kb.common.v1 import common_pb2
from kb.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.limits import DEFAULT_SIMILARITY, DEFAULT_TOP_N, MAX_TOP_N
from kbcore.rpc import SEARCH_MODES, STOP_REASON_NAMES, paragraph_json, round_json

router = APIRouter(prefix="/api/dataset", tags=["dataset"], dependencies=[Depends(require_operator)])
MAX_UPLOAD_BYTES = 20 * 1024 * 1024


class DatasetIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    desc: str = Field(default="", max_length=5000)


class ParagraphIn(BaseModel):
    title: str = Field(default="", max_length=500)
    content: str = Field(min_length=1, max_length=100_000)


class DocumentIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    paragraphs: list[ParagraphIn] = Field(min_length=1, max_length=5000)


def backends(request: Request) -> Backends:
    return request.app.state.backends  # type: ignore[no-any-return]


def dataset_json(d: pb.Dataset) -> dict[str, Any]:
    return {
        "id": d.id,
        "name": d.name,
        "desc": d.description,
        "document_count": d.document_count,
        "paragraph_count": d.paragraph_count,
        "create_time": d.created_at,
    }


def document_json(d: pb.Document) -> dict[str, Any]:
    return {
        "id": d.id,
        "dataset_id": d.dataset_id,
        "name": d.name,
        "paragraph_count": d.paragraph_count,
        "char_length": d.char_length,
        "create_time": d.created_at,
    }


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


async def last_of(stream: AsyncIterable[Any], field: str, what: str) -> Any:
    """The last ``field`` event of a server stream (progress events before it are for chats
    and progress bars); a stream that ends without one is the backend's fault."""
    found = None

    async def consume() -> None:
        nonlocal found
        async for event in stream:
            if event.HasField(field):
                found = getattr(event, field)

    await call(consume())
    if found is None:
        raise ApiError(502, f"the retrieval service ended {what} without a {field}")
    return found


async def _add_document(b: Backends, request: pb.AddDocumentRequest) -> dict[str, Any]:
    document = await last_of(b.retrieval.AddDocument(request, timeout=b.ask_timeout), "document", "ingestion")
    return document_json(document)


@router.post("/{dataset_id}/document")
async def add_document(dataset_id: str, request: Request, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    """JSON ``{name, paragraphs:[{title, content}]}``, or multipart with a .md/.txt file in ``file``."""
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
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
    search_mode: Annotated[str, Query(pattern="^(vector|keyword|hybrid|embedding|blend)$")] = "hybrid",
) -> HitTestQuery:
    # MaxKB calls vector search "embedding" and hybrid "blend"; both spellings are accepted.
    mode = {"embedding": "vector", "blend": "hybrid"}.get(search_mode, search_mode)
    if not query_text.strip():
        raise ApiError(400, "query_text must not be blank")
    settings = common_pb2.SearchSettings(top_n=top_number, similarity=similarity, search_mode=SEARCH_MODES[mode])
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


def retrieve_result_json(result: pb.RetrieveResult) -> dict[str, Any]:
    return {
        "problem_text": result.problem_text,
        "rounds": [round_json(r) for r in result.rounds],
        "stop_reason": STOP_REASON_NAMES.get(result.stop_reason, ""),
        "sufficient": result.sufficient,
        "missing": result.missing,
        "run_time": round(result.run_time, 3),
        "paragraph_list": [paragraph_json(p) for p in result.paragraphs],
    }


async def retrieve(b: Backends, request: pb.RetrieveRequest) -> pb.RetrieveResult:
    """Run the multi-round loop and keep only its result."""
    result: pb.RetrieveResult = await last_of(
        b.retrieval.Retrieve(request, timeout=b.ask_timeout), "result", "the loop"
    )
    return result


@router.get("/{dataset_id}/hit_test_rounds")
async def hit_test_rounds(
    dataset_id: str, b: Annotated[Backends, Depends(backends)], q: Annotated[HitTestQuery, Depends(hit_test_query)]
) -> JSONResponse:
    """The multi-round loop on one dataset: every round's queries, new paragraphs and verdict."""
    result = await retrieve(b, pb.RetrieveRequest(dataset_ids=[dataset_id], search=q.settings, question=q.query_text))
    return ok(retrieve_result_json(result))
