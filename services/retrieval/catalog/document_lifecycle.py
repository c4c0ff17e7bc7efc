"""Documents as the API sees them: submitted, followed until ready, cancelled, deleted.

The servicer stays a translator; this is where an upload becomes queued jobs (or nothing, when
the same file is already served), and where a deletion reaches both the catalog and the store.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Callable

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.tables import Application, Document, IngestJob
from kbcore.document_types import source_type_of_name
from kbcore.errors import InvalidRequest
from kbcore.words.said import said
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.embedding.spaces import EmbeddingSpaces
from services.retrieval.ingestion.jobs.intake import UploadIntake
from services.retrieval.ingestion.jobs.queue import JobQueue, Upload
from services.retrieval.ingestion.jobs.source_chunks import in_file, in_memory
from services.retrieval.ingestion.jobs.states import ACTIVE
from services.retrieval.ingestion.jobs.uploads import FileHead, check_filename, file_uploads, uploads_of
from services.retrieval.ingestion.parsing import ParsedDocument, ParseLimits
from services.retrieval.ingestion.parsing.confined.sandbox import parse_in_child
from services.retrieval.ingestion.parsing.upload_check import ARCHIVE
from services.retrieval.ingestion.parsing.web_fetch import FetchPolicy
from services.retrieval.ingestion.split_rules import DEFAULT_RULES, SplitRules
from services.retrieval.ingestion.version_build import VersionBuilder

DocumentView = tuple[Document, IngestJob | None]
FOLLOW_EVERY = 0.1  # seconds between two looks at a followed document's job


class DocumentLifecycle:
    def __init__(
        self,
        catalog: Catalog,
        queue: JobQueue,
        builder: VersionBuilder,
        spaces: EmbeddingSpaces,
        wake_worker: Callable[[], None],
        limits: ParseLimits,
        fetch: FetchPolicy,
        intake: UploadIntake,
    ) -> None:
        self._catalog = catalog
        self._queue = queue
        self._builder = builder
        self._spaces = spaces  # where each dataset's points are (its embedding model's store)
        self._wake_worker = wake_worker
        self._limits = limits
        self._fetch = fetch
        self._intake = intake  # a file's way in: the budget, the spool, the size limit

    async def submit(
        self, source: str, request: pb.AddDocumentRequest | pb.SubmitDocumentsRequest
    ) -> list[DocumentView]:
        """Queue a job per document the request brings; a document that already serves exactly this
        upload (and still has all its points) is returned as it is. A file sent whole in the
        request takes the way a streamed one does (``submit_file``), its bytes held meanwhile."""
        await self._catalog.get_dataset(request.dataset_id)
        if source == "file":
            data = request.file.data
            async with self._intake.admitted(max(1, len(data)), None) as limit:
                return await self.submit_file(request.dataset_id, FileHead.of(request), in_memory(data), limit)
        uploads = await uploads_of(source, request, self._fetch)
        views = [await self._submit_one(request.dataset_id, upload) for upload in uploads]
        self._wake_worker()
        return views

    @contextlib.asynccontextmanager
    async def admitted(self, dataset_id: str, declared: int, seconds_left: float | None) -> AsyncIterator[int]:
        """A streamed upload's share of the budget, held while the block runs: its dataset is
        looked for first (an unknown one is refused before anything is held); yields the bytes
        the upload may bring."""
        if dataset_id:
            await self._catalog.get_dataset(dataset_id)
        async with self._intake.admitted(declared, seconds_left) as limit:
            yield limit

    async def submit_file(
        self, dataset_id: str, head: FileHead, pieces: AsyncIterable[bytes], limit: int
    ) -> list[DocumentView]:
        """Receive a file into the spool as its ``pieces`` come (at most ``limit`` bytes, and the
        upload limit), check it there in a child process, and queue a job per document it brings,
        each job's rows copied from the spool; the spool is emptied however this ends."""
        check_filename(head.filename)
        async with self._intake.spool.folder() as folder:
            path = await folder.receive(head.filename, pieces, min(limit, self._intake.max_bytes))
            uploads = await file_uploads(head, path, folder, self._limits)
            views = [await self._submit_one(dataset_id, upload) for upload in uploads]
        self._wake_worker()
        return views

    async def preview(self, head: FileHead, pieces: AsyncIterable[bytes], limit: int) -> ParsedDocument:
        """The paragraphs a file makes under its rules: what the import's job would make (the same
        checks and the same parser, in its sandbox), received into the spool as its ``pieces``
        come and fed from there; nothing stored."""
        check_filename(head.filename)
        if source_type_of_name(head.filename) == ARCHIVE:
            raise InvalidRequest(said("zip_holds_several_documents_preview_files"))
        async with self._intake.spool.folder() as folder:
            path = await folder.receive(head.filename, pieces, min(limit, self._intake.max_bytes))
            return await parse_in_child(head.filename, in_file(path), self._limits, head.rules or DEFAULT_RULES)

    async def preview_whole(self, file: pb.FileContent, rules: SplitRules) -> ParsedDocument:
        """``preview`` of a file sent whole in the request, its bytes held meanwhile."""
        async with self._intake.admitted(max(1, len(file.data)), None) as limit:
            return await self.preview(FileHead(file.filename, rules=rules), in_memory(file.data), limit)

    async def submit_upload(self, dataset_id: str, upload: Upload) -> None:
        """Queue one upload made here (a web page fetched again) as a new version of its document."""
        await self._submit_one(dataset_id, upload)
        self._wake_worker()

    async def _submit_one(self, dataset_id: str, upload: Upload) -> DocumentView:
        served = await self._queue.served(dataset_id, upload)
        if served is not None and await self._builder.is_intact(dataset_id, served.id, served.paragraph_count):
            return served, None
        space = await self._spaces.served(dataset_id)
        await space.store.check_room()  # a full disk: refused now, not later as a failed job
        document = await self._queue.submit(dataset_id, upload)
        return await self._queue.document(dataset_id, document.id)

    async def follow(self, dataset_id: str, document_id: str) -> AsyncIterator[DocumentView]:
        """The document each time its job moves, until the job has ended."""
        last: tuple[str, int, int] | None = None
        while True:
            document, job = await self._queue.document(dataset_id, document_id)
            running = job is not None and job.state in ACTIVE
            seen = (document.status, job.done if job else 0, job.total if job else 0)
            if seen != last or not running:
                yield document, job
                last = seen
            if not running:
                return
            await asyncio.sleep(FOLLOW_EVERY)

    async def document(self, dataset_id: str, document_id: str) -> DocumentView:
        return await self._queue.document(dataset_id, document_id)

    async def documents(self, dataset_id: str) -> list[DocumentView]:
        return await self._queue.documents(dataset_id)

    async def cancel(self, dataset_id: str, document_id: str) -> DocumentView:
        await self._queue.cancel(dataset_id, document_id)
        return await self._queue.document(dataset_id, document_id)

    async def delete_document(self, dataset_id: str, document_id: str) -> None:
        """The catalog row (and its jobs) first: a worker still embedding it finds its job gone at
        its next report and drops what it wrote; then every point of the document."""
        spaces = await self._spaces.every_space_of(dataset_id)
        for space in spaces:  # a full disk refuses the store's part: then the catalog's is not done either
            await space.store.check_room()
        await self._catalog.delete_document(dataset_id, document_id)
        for space in spaces:
            await space.store.delete_document(dataset_id, document_id)

    async def delete_dataset(self, dataset_id: str) -> list[Application]:
        spaces = await self._spaces.every_space_of(dataset_id)
        for space in spaces:
            await space.store.check_room()
        detached = await self._catalog.delete_dataset(dataset_id)
        for space in spaces:
            await space.store.delete_dataset(dataset_id)
        return detached
