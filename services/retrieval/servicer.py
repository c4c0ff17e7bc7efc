"""RetrievalService: validates each request, then hands it to search, the loop or ingestion."""

from __future__ import annotations

import asyncio
import logging
import pathlib
from collections.abc import AsyncIterator, Iterable
from typing import Any

from kb.retrieval.v1 import retrieval_service_pb2 as pb
from kb.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from kbcore.db.models import Document
from kbcore.limits import MAX_NAME_CHARS, MAX_QUESTION_TOKENS, MAX_SEARCH_QUERY_CHARS
from kbcore.models.base import ModelClient
from kbcore.rpc import Context, RpcError, invalid, not_found, stream_errors, unary_errors
from kbcore.tokens import fits_tokens
from services.retrieval import convert
from services.retrieval.catalog import Catalog
from services.retrieval.ingest import Ingestor, IngestProgress
from services.retrieval.loop import FIRST_QUERY_CHARS, LoopLimits, LoopResult, RetrievalLoop
from services.retrieval.search import Searcher
from services.retrieval.splitter import SplitParagraph, UnsupportedDocument, decode_text, split_document

log = logging.getLogger(__name__)


class RetrievalServicer(pb_grpc.RetrievalServiceServicer):
    def __init__(
        self, catalog: Catalog, searcher: Searcher, ingestor: Ingestor, model: ModelClient, limits: LoopLimits
    ):
        self._catalog = catalog
        self._searcher = searcher
        self._ingestor = ingestor
        self._model = model
        self._limits = limits

    async def _known_datasets(self, dataset_ids: Iterable[str]) -> tuple[str, ...]:
        ids = _distinct_ids(dataset_ids)
        await self._require_known(ids)
        return ids

    async def _require_known(self, ids: tuple[str, ...]) -> None:
        missing = await self._catalog.missing_datasets(list(ids))
        if missing:
            raise not_found(f"unknown dataset(s): {', '.join(missing)}")

    @stream_errors
    async def Retrieve(self, request: pb.RetrieveRequest, context: Context) -> AsyncIterator[pb.RetrieveResponse]:
        question = request.question.strip()
        if not question:
            raise invalid("question must not be empty")
        if not fits_tokens(question, MAX_QUESTION_TOKENS):
            raise invalid(f"question is longer than {MAX_QUESTION_TOKENS} estimated tokens")
        settings = convert.search_settings(request.search)
        history = convert.history(list(request.history))
        dataset_ids = _distinct_ids(request.dataset_ids)
        # Without history the loop's first query is the question itself: search it while the
        # datasets are checked. Nothing is said before the check has passed; if it fails, the
        # early search is dropped.
        first_query = question[:FIRST_QUERY_CHARS] if dataset_ids and not history else None
        early = (
            asyncio.ensure_future(self._searcher.search(dataset_ids, first_query, settings)) if first_query else None
        )
        if early is not None:  # its failure is reported where the loop awaits it, or not at all
            early.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            await self._require_known(dataset_ids)
        except BaseException:
            if early is not None:
                early.cancel()
            raise

        async def search(query: str) -> Any:
            nonlocal early
            if early is not None and query == first_query:
                taken, early = early, None
                return await taken
            return await self._searcher.search(dataset_ids, query, settings)

        loop = RetrievalLoop(self._model, search, self._limits)
        try:
            async for event in loop.run(question, history, bool(dataset_ids)):
                yield convert.result(event) if isinstance(event, LoopResult) else convert.progress(event)
        finally:
            if early is not None:
                early.cancel()

    @unary_errors
    async def Search(self, request: pb.SearchRequest, context: Context) -> pb.SearchResponse:
        query = request.query.strip()
        if not query:
            raise invalid("query must not be empty")
        if len(query) > MAX_SEARCH_QUERY_CHARS:
            raise invalid(f"query is longer than {MAX_SEARCH_QUERY_CHARS} characters")
        settings = convert.search_settings(request.search)
        dataset_ids = await self._known_datasets(request.dataset_ids)
        if not dataset_ids:
            raise invalid("dataset_ids must name at least one dataset")
        hits = await self._searcher.search(dataset_ids, query, settings)
        return pb.SearchResponse(paragraphs=[convert.paragraph(h) for h in hits])

    @unary_errors
    async def CreateDataset(self, request: pb.CreateDatasetRequest, context: Context) -> pb.CreateDatasetResponse:
        name = request.name.strip()
        if not name:
            raise invalid("dataset name must not be empty")
        if len(name) > MAX_NAME_CHARS:
            raise invalid(f"dataset name is longer than {MAX_NAME_CHARS} characters")
        dataset = await self._catalog.create_dataset(name, request.description, request.id.strip() or None)
        return pb.CreateDatasetResponse(dataset=convert.dataset(dataset))

    @unary_errors
    async def ListDatasets(self, request: pb.ListDatasetsRequest, context: Context) -> pb.ListDatasetsResponse:
        rows = await self._catalog.list_datasets()
        return pb.ListDatasetsResponse(datasets=[convert.dataset(d, docs, paras) for d, docs, paras in rows])

    @unary_errors
    async def DeleteDataset(self, request: pb.DeleteDatasetRequest, context: Context) -> pb.DeleteDatasetResponse:
        await self._ingestor.delete_dataset(request.dataset_id)
        return pb.DeleteDatasetResponse()

    @stream_errors
    async def AddDocument(
        self, request: pb.AddDocumentRequest, context: Context
    ) -> AsyncIterator[pb.AddDocumentResponse]:
        await self._catalog.get_dataset(request.dataset_id)
        name, paragraphs = _document_source(request)
        try:
            async for event in self._ingestor.add(request.dataset_id, name, paragraphs):
                if isinstance(event, IngestProgress):
                    yield pb.AddDocumentResponse(progress=pb.IngestProgress(embedded=event.embedded, total=event.total))
                elif isinstance(event, Document):
                    yield pb.AddDocumentResponse(document=convert.document(event))
        except ValueError as exc:
            raise invalid(str(exc)) from exc

    @unary_errors
    async def ListDocuments(self, request: pb.ListDocumentsRequest, context: Context) -> pb.ListDocumentsResponse:
        documents = await self._catalog.list_documents(request.dataset_id)
        return pb.ListDocumentsResponse(documents=[convert.document(d) for d in documents])

    @unary_errors
    async def DeleteDocument(self, request: pb.DeleteDocumentRequest, context: Context) -> pb.DeleteDocumentResponse:
        await self._ingestor.delete_document(request.dataset_id, request.document_id)
        return pb.DeleteDocumentResponse()


def _document_source(request: pb.AddDocumentRequest) -> tuple[str, list[SplitParagraph]]:
    """The document's name and paragraphs, from pre-split paragraphs or a text file."""
    if not request.dataset_id:
        raise invalid("dataset_id must not be empty")
    source = request.WhichOneof("source")
    if source == "paragraphs":
        name = request.name.strip()
        if not name:
            raise invalid("a document given as paragraphs needs a name")
        paragraphs = [
            SplitParagraph(p.title.strip(), p.content.strip())
            for p in request.paragraphs.paragraphs
            if p.content.strip()
        ]
        if not paragraphs:
            raise invalid("the document has no paragraph with content")
    elif source == "file":
        try:
            text = decode_text(request.file.filename, request.file.data)
        except UnsupportedDocument as exc:
            raise invalid(str(exc)) from exc
        paragraphs = split_document(text)
        first_heading = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), "")
        name = request.name.strip() or first_heading or pathlib.PurePath(request.file.filename).stem
        if not paragraphs:
            raise invalid(f"{request.file.filename!r} contains no text")
    else:
        raise invalid("give the document as paragraphs or as a file")
    if len(name) > MAX_NAME_CHARS:
        raise invalid(f"document name is longer than {MAX_NAME_CHARS} characters")
    return name, paragraphs


__all__ = ["RetrievalServicer", "RpcError"]


def _distinct_ids(dataset_ids: Iterable[str]) -> tuple[str, ...]:
    """Trimmed, blanks dropped, each id once, in the order given."""
    return tuple(dict.fromkeys(d.strip() for d in dataset_ids if d.strip()))
