"""Datasets, documents and the hit test (who may call which: ``kbcore.permissions.table``); a
document's paragraphs are in ``gateway.routes.documents.paragraphs``.

Documents go in as background jobs: every upload is checked here for what the gateway can see
(size, type by suffix, field lengths), handed to the retrieval service (a file streamed in pieces
within the deployment's upload budget: ``gateway.uploads``; paragraphs to ``SubmitDocuments``) and
answered at once, each document ``queued``; a client follows it with ``GET …/document/{id}``
until its ``status`` is ``ready`` or ``failed``. The routes are MaxKB v1's (apps/dataset/urls.py):
``document``, ``document/web``, ``document/{id}``, ``document/{id}/cancel_task``, and its web
syncs ``document/{id}/sync`` and ``sync_web``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints
from starlette.datastructures import FormData, UploadFile

from gateway.backends import Backend, CallerBackend
from gateway.edge.body_limits import upload_max_bytes
from gateway.edge.rules import is_json, is_multipart
from gateway.errors import ApiError, ReaderLanguage, ok
from gateway.presenter import (
    DEFAULT_SEARCH_MODE_NAME,
    SEARCH_MODE_SPELLINGS,
    dataset_out,
    detached_out,
    document_out,
    paragraph_out,
    retrieval_out,
    search_mode,
    synced_out,
    upload_rules_out,
)
from gateway.routes.documents import export, paragraphs, questions
from gateway.routes.documents.split import MAX_RULE_FIELDS, split_rules_of
from gateway.shapes.answers import ParagraphOut, RetrievalOut
from gateway.shapes.datasets import DatasetOut, DetachedOut, DocumentOut, SyncedDocumentOut, UploadRulesOut
from gateway.shapes.envelope import REFUSALS, Envelope
from gateway.uploads import admitted, checked_size, form_of
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.document_types import SUPPORTED_TYPES_SENTENCE, source_type_of_name
from kbcore.limits import DEFAULT_SIMILARITY, DEFAULT_TOP_N, MAX_NAME_CHARS, MAX_SYNC_HOURS, MAX_TOP_N
from kbcore.settings import Settings
from kbcore.words.said import said

router = APIRouter(prefix="/api/dataset", tags=["dataset"], responses=REFUSALS)

ARCHIVE_TYPE = "zip"
MAX_WEB_URLS = 50  # one request's pages; each is a job of its own
MAX_URL_CHARS = 2048
SYNC_FETCH_SECONDS = 30.0  # one page fetched again, beyond the usual deadline (KB_FETCH_TIMEOUT is at most this)
SYNC_DATASET_SECONDS = 600.0  # every page of a dataset, a few at a time
# An upload is one file (a .zip for many), its name and its split rules beside it.
MAX_FORM_FILES = 1


class DatasetIn(BaseModel):
    """``embedding_model_id``: a registered embedding model ("" or absent = the deployment's
    default); MaxKB's ``embedding_mode_id`` is accepted for it."""

    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    desc: str = Field(default="", max_length=5000)
    embedding_model_id: str | None = Field(default=None, max_length=36)
    embedding_mode_id: str | None = Field(default=None, max_length=36)

    def embedding_model(self) -> str | None:
        return embedding_model_of(self.embedding_model_id, self.embedding_mode_id)


class DatasetChangeIn(BaseModel):
    """What ``PUT /api/dataset/{id}`` changes; absent fields stay. A new embedding model starts a
    re-embedding in the background (follow ``embedding_switch``); the current model while one
    runs cancels it."""

    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    desc: str | None = Field(default=None, max_length=5000)
    embedding_model_id: str | None = Field(default=None, max_length=36)
    embedding_mode_id: str | None = Field(default=None, max_length=36)
    # Its web documents synced every this many hours (0 = only when asked; whole hours).
    sync_hours: int | None = Field(default=None, ge=0, le=MAX_SYNC_HOURS, strict=True)


def embedding_model_of(ours: str | None, maxkb: str | None) -> str | None:
    if ours is not None and maxkb is not None and ours.strip() != maxkb.strip():
        raise ApiError(400, said("embedding_model_id_embedding_mode_id"))
    chosen = ours if ours is not None else maxkb
    return chosen.strip() if chosen is not None else None


class ParagraphIn(BaseModel):
    title: str = Field(default="", max_length=500)
    content: str = Field(min_length=1, max_length=100_000)


class DocumentIn(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    paragraphs: list[ParagraphIn] = Field(min_length=1, max_length=5000)


Url = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_URL_CHARS)]


class WebDocumentsIn(BaseModel):
    """MaxKB's web-document body. ``selector`` is accepted for MaxKB clients only when empty:
    the main content is found without one, and a selector silently ignored would mislead."""

    source_url_list: list[Url] = Field(min_length=1, max_length=MAX_WEB_URLS)
    selector: str | None = Field(default=None, max_length=1000)


@router.post("", response_model=Envelope[DatasetOut])
async def create_dataset(body: DatasetIn, backend: CallerBackend, language: ReaderLanguage) -> JSONResponse:
    request = pb.CreateDatasetRequest(
        name=body.name, description=body.desc, embedding_model_id=body.embedding_model() or ""
    )
    reply = await backend.unary(backend.retrieval.datasets.CreateDataset, request)
    return ok(dataset_out(reply.dataset, language).wire())


@router.put("/{dataset_id}", response_model=Envelope[DatasetOut])
async def update_dataset(
    dataset_id: str, body: DatasetChangeIn, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    request = pb.UpdateDatasetRequest(dataset_id=dataset_id)
    if body.name is not None:
        request.name = body.name
    if body.desc is not None:
        request.description = body.desc
    model = embedding_model_of(body.embedding_model_id, body.embedding_mode_id)
    if model is not None:
        request.embedding_model_id = model
    if body.sync_hours is not None:
        request.sync_hours = body.sync_hours
    reply = await backend.unary(backend.retrieval.datasets.UpdateDataset, request)
    return ok(dataset_out(reply.dataset, language).wire())


@router.get("", response_model=Envelope[list[DatasetOut]])
async def list_datasets(backend: CallerBackend, language: ReaderLanguage) -> JSONResponse:
    reply = await backend.unary(backend.retrieval.datasets.ListDatasets, pb.ListDatasetsRequest())
    return ok([dataset_out(d, language).wire() for d in reply.datasets])


@router.get("/document/upload_rules", response_model=Envelope[UploadRulesOut])
async def upload_rules(request: Request, language: ReaderLanguage) -> JSONResponse:
    """What an upload form needs before sending (the operator page's ``accept`` list and size
    check): the same table and setting the upload route checks with, so they cannot disagree."""
    return ok(upload_rules_out(request.app.state.settings.upload_max_mb, language).wire())


@router.delete("/{dataset_id}", response_model=Envelope[DetachedOut])
async def delete_dataset(dataset_id: str, backend: CallerBackend) -> JSONResponse:
    """Answers ``{"detached_applications": [{id, name}]}``: the applications that searched this
    dataset lose it in the same transaction, and the operator is told which ones."""
    reply = await backend.unary(
        backend.retrieval.datasets.DeleteDataset, pb.DeleteDatasetRequest(dataset_id=dataset_id)
    )
    return ok(detached_out(reply).wire())


def _form_name(form: FormData) -> str:
    name = form.get("name")
    if name is None or name == "":
        return ""
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        raise ApiError(400, said("form_field_name_must_be_text", max_name_chars=MAX_NAME_CHARS))
    return name.strip()


def _file_head(form: FormData, settings: Settings) -> tuple[UploadFile, pb.UploadFile]:
    """A multipart upload's one file in ``file`` (its suffix must name a supported type, 415
    otherwise; over the upload limit, 413) and what comes with it: an optional ``name`` for a
    single document, the split rules."""
    upload = form.get("file")
    if not isinstance(upload, UploadFile) or not upload.filename:
        raise ApiError(400, said("upload_needs_file_form_field_file"))
    source_type = source_type_of_name(upload.filename)
    if source_type is None:
        raise ApiError(
            415, said("cannot_take", filename=f"{upload.filename!r}", supported_types_sentence=SUPPORTED_TYPES_SENTENCE)
        )
    name = _form_name(form)
    if source_type == ARCHIVE_TYPE and name:
        raise ApiError(400, said("zip_documents_are_named_their_paths"))
    checked_size(upload, upload_max_bytes(settings))
    head = pb.UploadFile(filename=upload.filename, name=name)
    rules = split_rules_of(form)
    if rules is not None:
        head.split_rules.CopyFrom(rules)
    return upload, head


async def _uploaded_file(dataset_id: str, request: Request, backend: Backend) -> tuple[list[pb.Document], bool]:
    """A multipart upload, admitted against the upload budget before its body is read, its file
    streamed to the retrieval service; the documents it made, and whether it was a .zip (a list
    of documents in the answer)."""
    documents = backend.retrieval.documents
    async with admitted(backend, documents.UploadDocuments, request, dataset_id) as upload:
        async with form_of(request, max_files=MAX_FORM_FILES, max_fields=MAX_RULE_FIELDS) as form:
            file, head = _file_head(form, request.app.state.settings)
            await upload.send(file, head)
        reply = await upload.answer()
    archive = source_type_of_name(head.filename) == ARCHIVE_TYPE
    return list(reply.documents.documents), archive


async def _paragraphs_submission(dataset_id: str, request: Request) -> pb.SubmitDocumentsRequest:
    try:
        body = DocumentIn.model_validate_json(await request.body())
    except ValueError as exc:
        raise ApiError(400, said("invalid_document_body", exc=exc)) from exc
    paragraph_list = pb.ParagraphList(
        paragraphs=[pb.ParagraphInput(title=p.title, content=p.content) for p in body.paragraphs]
    )
    return pb.SubmitDocumentsRequest(dataset_id=dataset_id, name=body.name, paragraphs=paragraph_list)


@router.post("/{dataset_id}/document", response_model=Envelope[DocumentOut | list[DocumentOut]])
async def add_document(
    dataset_id: str, request: Request, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    """JSON ``{name, paragraphs:[{title, content}]}``, or multipart with one file in ``file``
    (any supported type, or a .zip of them); answers at once with the document, ``queued``
    (a .zip: the list of its documents). Any other body type is refused, never read as JSON
    (a page's ``text/plain`` POST planted a document this way)."""
    content_type = request.headers.get("content-type", "")
    if is_multipart(content_type):
        made, archive = await _uploaded_file(dataset_id, request, backend)
    elif is_json(content_type):
        submission = await _paragraphs_submission(dataset_id, request)
        made, archive = (
            list((await backend.unary(backend.retrieval.documents.SubmitDocuments, submission)).documents),
            False,
        )
    else:
        raise ApiError(415, said("send_document_application_json_multipart_form"))
    documents = [document_out(d, language).wire() for d in made]
    if archive:
        return ok(documents)
    if len(documents) != 1:
        raise ApiError(502, said("retrieval_service_answered_one_upload_other"))
    return ok(documents[0])


def _checked_urls(body: WebDocumentsIn) -> list[str]:
    if body.selector and body.selector.strip():
        raise ApiError(400, said("selector_not_supported_page_main_content"))
    for index, url in enumerate(body.source_url_list):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApiError(400, said("source_url_list_not_http_s", index=index, url_200=f"{url[:200]!r}"))
    return list(body.source_url_list)


@router.post("/{dataset_id}/document/web", response_model=Envelope[list[DocumentOut]])
async def add_web_documents(
    dataset_id: str, body: WebDocumentsIn, request: Request, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    """MaxKB's ``{source_url_list, selector}``: one document per page, answered with the
    documents, ``queued``. The retrieval service fetches each page when it is submitted (so the
    deadline allows one fetch), all pages at once; a page refused (an address not allowed, a
    404) fails the request with its index, saying how many others were queued."""
    urls = _checked_urls(body)
    deadline = backend.timeout + request.app.state.settings.fetch_timeout

    async def submit(url: str) -> pb.SubmitDocumentsResponse:
        message = pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=url)
        reply: pb.SubmitDocumentsResponse = await backend.unary(
            backend.retrieval.documents.SubmitDocuments, message, timeout=deadline
        )
        return reply

    replies = await asyncio.gather(*(submit(url) for url in urls), return_exceptions=True)
    refused = [(index, reply) for index, reply in enumerate(replies) if isinstance(reply, BaseException)]
    if refused:
        index, error = refused[0]
        if not isinstance(error, ApiError):
            raise error
        queued = len(urls) - len(refused)
        if queued:
            raise ApiError(
                error.status,
                said("source_url_list_other_were_queued", index=index, error_message=error.words, queued=queued),
            )
        raise ApiError(error.status, said("source_url_list", index=index, error_message=error.words))
    return ok(
        [
            document_out(d, language).wire()
            for reply in replies
            if not isinstance(reply, BaseException)
            for d in reply.documents
        ]
    )


@router.get("/{dataset_id}/document", response_model=Envelope[list[DocumentOut]])
async def list_documents(dataset_id: str, backend: CallerBackend, language: ReaderLanguage) -> JSONResponse:
    reply = await backend.unary(
        backend.retrieval.documents.ListDocuments, pb.ListDocumentsRequest(dataset_id=dataset_id)
    )
    return ok([document_out(d, language).wire() for d in reply.documents])


@router.get("/{dataset_id}/document/{document_id}", response_model=Envelope[DocumentOut])
async def get_document(
    dataset_id: str, document_id: str, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    """One document with its job's status and progress: what a client polls until ``ready``."""
    document = await backend.unary(
        backend.retrieval.documents.GetDocument, pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document_id)
    )
    return ok(document_out(document, language).wire())


@router.put("/{dataset_id}/document/{document_id}/cancel_task", response_model=Envelope[DocumentOut])
async def cancel_document_task(
    dataset_id: str, document_id: str, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    """MaxKB's cancel (its body's task ``type`` is not read: a document has one job). The
    previous version, if any, keeps serving; answers with the document as it now is."""
    document = await backend.unary(
        backend.retrieval.documents.CancelIngestion,
        pb.CancelIngestionRequest(dataset_id=dataset_id, document_id=document_id),
    )
    return ok(document_out(document, language).wire())


class SyncWebIn(BaseModel):
    """MaxKB's ``sync_web`` body. ``replace`` (the default) fetches every page again and keeps
    what did not change; MaxKB's ``complete`` (delete, then import anew) is refused: it would
    embed every unchanged paragraph again and give it a new id."""

    sync_type: str = Field(default="replace", max_length=20)


@router.put("/{dataset_id}/document/{document_id}/sync", response_model=Envelope[SyncedDocumentOut])
async def sync_document(
    dataset_id: str, document_id: str, backend: CallerBackend, language: ReaderLanguage
) -> JSONResponse:
    """Fetch a web document's page again now (a conditional request): answers with the document
    and what the sync did. A document not imported from a page is refused (400)."""
    reply = await backend.unary(
        backend.retrieval.documents.SyncDocuments,
        pb.SyncDocumentsRequest(dataset_id=dataset_id, document_ids=[document_id]),
        timeout=backend.timeout + SYNC_FETCH_SECONDS,
    )
    return ok(synced_out(reply.documents[0], language).wire())


@router.put("/{dataset_id}/sync_web", response_model=Envelope[list[SyncedDocumentOut]])
async def sync_web_documents(
    dataset_id: str, backend: CallerBackend, language: ReaderLanguage, body: SyncWebIn | None = None
) -> JSONResponse:
    """Fetch every web document of the dataset again now: answers with each and what its sync did."""
    if body is not None and body.sync_type != "replace":
        raise ApiError(
            400,
            said("sync_type_must_be_replace_sync"),
        )
    reply = await backend.unary(
        backend.retrieval.documents.SyncDocuments,
        pb.SyncDocumentsRequest(dataset_id=dataset_id),
        timeout=backend.timeout + SYNC_DATASET_SECONDS,
    )
    return ok([synced_out(d, language).wire() for d in reply.documents])


@router.delete("/{dataset_id}/document/{document_id}", response_model=Envelope[bool])
async def delete_document(dataset_id: str, document_id: str, backend: CallerBackend) -> JSONResponse:
    await backend.unary(
        backend.retrieval.documents.DeleteDocument,
        pb.DeleteDocumentRequest(dataset_id=dataset_id, document_id=document_id),
    )
    return ok(True)


@dataclass(frozen=True)
class HitTestQuery:
    """The hit test's query string, shared by the single query and the multi-round loop."""

    query_text: str
    settings: common_pb2.SearchSettings


async def hit_test_query(  # async: no worker-thread hop (see backends)
    query_text: Annotated[str, Query(min_length=1, max_length=1000)],
    top_number: Annotated[int, Query(ge=1, le=MAX_TOP_N)] = DEFAULT_TOP_N,
    similarity: Annotated[float, Query(ge=0.0, le=1.0)] = DEFAULT_SIMILARITY,
    search_mode_name: Annotated[
        str, Query(alias="search_mode", pattern=f"^({'|'.join(SEARCH_MODE_SPELLINGS)})$")
    ] = DEFAULT_SEARCH_MODE_NAME,
) -> HitTestQuery:
    if not query_text.strip():
        raise ApiError(400, said("query_text_must_not_be_blank"))
    settings = common_pb2.SearchSettings(
        top_n=top_number, similarity=similarity, search_mode=search_mode(search_mode_name)
    )
    return HitTestQuery(query_text, settings)


@router.get("/{dataset_id}/hit_test", response_model=Envelope[list[ParagraphOut]])
async def hit_test(
    dataset_id: str, backend: CallerBackend, q: Annotated[HitTestQuery, Depends(hit_test_query)]
) -> JSONResponse:
    reply = await backend.unary(
        backend.retrieval.search.Search,
        pb.SearchRequest(dataset_ids=[dataset_id], query=q.query_text, search=q.settings),
    )
    return ok([paragraph_out(p).wire() for p in reply.paragraphs])


@router.get("/{dataset_id}/hit_test_rounds", response_model=Envelope[RetrievalOut])
async def hit_test_rounds(
    dataset_id: str, backend: CallerBackend, q: Annotated[HitTestQuery, Depends(hit_test_query)]
) -> JSONResponse:
    """The multi-round loop on one dataset: every round's queries, new paragraphs and verdict."""
    result = await backend.last_of(
        backend.retrieval.search.Retrieve,
        pb.RetrieveRequest(dataset_ids=[dataset_id], search=q.settings, question=q.query_text),
        "result",
        "the loop",
    )
    return ok(retrieval_out(result).wire())


# Questions first: a paragraph's ``…/{paragraph_id}/problem`` would read as a page of paragraphs.
router.include_router(questions.router)
router.include_router(paragraphs.router)
router.include_router(export.router)
