"""DocumentService: a dataset's documents added (from paragraphs, a file or a web page), listed,
followed while they are ingested, cancelled and deleted, translated to and from the document
lifecycle (``catalog.document_lifecycle``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import services.retrieval.retrieval_messages as convert
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from grpc_stubs.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from kbcore.errors import Conflict, InvalidRequest
from kbcore.refusals.status_details import as_proto
from kbcore.rpc.error_mapping import Context, stream_errors, unary_errors
from kbcore.words.said import said
from services.retrieval.catalog.document_lifecycle import DocumentLifecycle
from services.retrieval.catalog.upload_stream import UploadStream
from services.retrieval.ingestion.jobs.states import DocumentState
from services.retrieval.ingestion.jobs.uploads import FileHead
from services.retrieval.ingestion.parsing import ParsedDocument
from services.retrieval.ingestion.split_rules import SplitRules
from services.retrieval.ingestion.web_sync import WebSync

MAX_SYNCED_DOCUMENTS = 1000  # ids one request may name (none: every web document of the dataset)
MAX_PREVIEWED_PARAGRAPHS = 1000  # a preview shows the first ones and says how many there are
MAX_PREVIEWED_FILES = 5  # files one preview takes (the gateway's form allows as many)


class DocumentRpcs(pb_grpc.DocumentServiceServicer):
    def __init__(self, lifecycle: DocumentLifecycle, sync: WebSync):
        self._lifecycle = lifecycle
        self._sync = sync

    @stream_errors
    async def AddDocument(
        self, request: pb.AddDocumentRequest, context: Context
    ) -> AsyncIterator[pb.AddDocumentResponse]:
        source = _source(request)
        if source == "file" and request.file.filename.lower().endswith(".zip"):
            raise InvalidRequest(said("archive_holds_several_documents_submit_submitdocuments"))
        [(document, _)] = await self._lifecycle.submit(source, request)
        async for row, job in self._lifecycle.follow(request.dataset_id, document.id):
            shown = convert.document(row, job)
            if row.status == DocumentState.FAILED:
                raise InvalidRequest(
                    said("document_could_not_be_ingested", row_name=f"{row.name!r}", row_error=row.error)
                )
            if row.status == DocumentState.CANCELLED:
                raise Conflict(said("ingestion_document_was_cancelled_while_request", row_name=f"{row.name!r}"))
            done, total = (
                (row.paragraph_count,) * 2
                if row.status == DocumentState.READY
                else (
                    shown.progress_done,
                    shown.progress_total,
                )
            )
            yield pb.AddDocumentResponse(
                progress=pb.IngestProgress(embedded=done, total=total, status=shown.status, document_id=row.id)
            )
            if row.status == DocumentState.READY:  # a progress bar ends full, then the document
                yield pb.AddDocumentResponse(document=shown)
                return

    @unary_errors
    async def SubmitDocuments(self, request: pb.SubmitDocumentsRequest, context: Context) -> pb.SubmitDocumentsResponse:
        views = await self._lifecycle.submit(_source(request), request)
        return pb.SubmitDocumentsResponse(documents=[convert.document(d, j) for d, j in views])

    @unary_errors
    async def ListDocuments(self, request: pb.ListDocumentsRequest, context: Context) -> pb.ListDocumentsResponse:
        views = await self._lifecycle.documents(request.dataset_id)
        return pb.ListDocumentsResponse(documents=[convert.document(d, j) for d, j in views])

    @unary_errors
    async def GetDocument(self, request: pb.GetDocumentRequest, context: Context) -> pb.Document:
        return convert.document(*await self._lifecycle.document(request.dataset_id, request.document_id))

    @unary_errors
    async def CancelIngestion(self, request: pb.CancelIngestionRequest, context: Context) -> pb.Document:
        return convert.document(*await self._lifecycle.cancel(request.dataset_id, request.document_id))

    @unary_errors
    async def SyncDocuments(self, request: pb.SyncDocumentsRequest, context: Context) -> pb.SyncDocumentsResponse:
        if not request.dataset_id:
            raise InvalidRequest(said("dataset_id_must_not_be_empty"))
        if len(request.document_ids) > MAX_SYNCED_DOCUMENTS:
            raise InvalidRequest(said("most_documents_can_be_named_one", max_synced_documents=MAX_SYNCED_DOCUMENTS))
        synced = await self._sync.sync_documents(request.dataset_id, list(dict.fromkeys(request.document_ids)))
        documents = []
        for result in synced:
            row, job = await self._lifecycle.document(request.dataset_id, result.document_id)
            documents.append(
                pb.SyncedDocument(
                    document=convert.document(row, job),
                    outcome=result.outcome,
                    message=str(result.message),
                    message_words=as_proto(result.message),
                )
            )
        return pb.SyncDocumentsResponse(documents=documents)

    @unary_errors
    async def PreviewSplit(self, request: pb.PreviewSplitRequest, context: Context) -> pb.PreviewSplitResponse:
        return _preview(await self._lifecycle.preview_whole(request.file, SplitRules.from_message(request.split_rules)))

    @stream_errors
    async def UploadDocuments(
        self, requests: AsyncIterator[pb.UploadPart], context: Context
    ) -> AsyncIterator[pb.UploadReply]:
        parts = UploadStream(requests)
        head = await parts.head()
        if not head.dataset_id:
            raise InvalidRequest(said("dataset_id_must_not_be_empty"))
        async with self._lifecycle.admitted(head.dataset_id, head.declared_bytes, context.time_remaining()) as limit:
            yield pb.UploadReply(admitted=pb.UploadAdmitted())
            async with parts.refused_once_read():
                file = await parts.file()
                if file is None:
                    raise InvalidRequest(said("upload_needs_file"))
                pieces = parts.chunks(last=True)
                views = await self._lifecycle.submit_file(head.dataset_id, FileHead.of_part(file), pieces, limit)
        documents = pb.SubmitDocumentsResponse(documents=[convert.document(d, j) for d, j in views])
        yield pb.UploadReply(documents=documents)

    @stream_errors
    async def PreviewUploads(
        self, requests: AsyncIterator[pb.UploadPart], context: Context
    ) -> AsyncIterator[pb.UploadReply]:
        parts = UploadStream(requests)
        head = await parts.head()
        previews: list[pb.PreviewSplitResponse] = []
        async with self._lifecycle.admitted("", head.declared_bytes, context.time_remaining()) as limit:
            yield pb.UploadReply(admitted=pb.UploadAdmitted())
            async with parts.refused_once_read():
                while (file := await parts.file()) is not None:
                    if len(previews) == MAX_PREVIEWED_FILES:
                        raise InvalidRequest(
                            said("one_preview_takes_most_files", max_previewed_files=MAX_PREVIEWED_FILES)
                        )
                    preview = await self._lifecycle.preview(FileHead.of_part(file), parts.chunks(), limit)
                    previews.append(_preview(preview))
        if not previews:
            raise InvalidRequest(said("preview_needs_file"))
        yield pb.UploadReply(previews=pb.PreviewUploadsResponse(previews=previews))

    @unary_errors
    async def DeleteDocument(self, request: pb.DeleteDocumentRequest, context: Context) -> pb.DeleteDocumentResponse:
        await self._lifecycle.delete_document(request.dataset_id, request.document_id)
        return pb.DeleteDocumentResponse()


def _preview(parsed: ParsedDocument) -> pb.PreviewSplitResponse:
    shown = parsed.paragraphs[:MAX_PREVIEWED_PARAGRAPHS]
    return pb.PreviewSplitResponse(
        title=parsed.title,
        paragraphs=[pb.ParagraphInput(title=p.title, content=p.content) for p in shown],
        total=len(parsed.paragraphs),
        unused_separators=list(parsed.unused_separators),
    )


def _source(request: pb.AddDocumentRequest | pb.SubmitDocumentsRequest) -> str:
    if not request.dataset_id:
        raise InvalidRequest(said("dataset_id_must_not_be_empty"))
    source = request.WhichOneof("source")
    if source is None:
        raise InvalidRequest(said("give_document_paragraphs_file_web_page"))
    return str(source)
