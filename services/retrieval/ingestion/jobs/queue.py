"""The ingestion queue in SQL: one job row per upload, claimed by one retrieval process at a time.
The upload's original waits beside it in pieces (``source_chunks``) and goes when the job ends.

A job is leased (``jobs.leased``, whose queue this one is: claimed by compare and set, its lease
renewed with every progress report, taken over when its holder dies, every write conditional on
still holding it), so a job taken over from a slow process is never finished twice.

An upload accepted and an ingestion cancelled are an operator's actions: each adds its audit
row in the transaction that queues or cancels the job (``kbcore.db.audit``; docs/access.md).
The worker's progress and outcome that follow are not recorded.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from kbcore.db.audit import record_action
from kbcore.db.engine import run_read
from kbcore.db.tables import Dataset, Document, IngestJob, utcnow
from kbcore.errors import Conflict, NotFound
from kbcore.limits import MAX_NAME_CHARS
from kbcore.words.said import Said, said
from services.retrieval.ingestion.jobs.leased import LeasedQueue, claimed_as
from services.retrieval.ingestion.jobs.source_chunks import Source, delete_source, pieces, read_source, store_source
from services.retrieval.ingestion.jobs.states import ACTIVE, DocumentState, JobState
from services.retrieval.ingestion.source_digest import source_digest
from services.retrieval.ingestion.split_rules import DEFAULT_RULES, SplitRules

# Documents with their newest job, in one statement (one snapshot: see ``JobQueue.document``).
_WITH_JOB = select(Document, IngestJob).outerjoin(IngestJob, IngestJob.id == Document.job_id)


@dataclass(frozen=True)
class Upload:
    """One document's original, as stored on its job: in memory (a page, paragraphs) or a
    checked file in the local spool, copied into the job's rows piece by piece."""

    name: str
    filename: str
    source_type: str
    data: Source
    # A web page's: the address it was fetched from (what identifies its document in the
    # dataset) and the validators of that fetch, for the next sync's conditional request.
    source_url: str = ""
    etag: str = ""
    modified: str = ""
    rules: SplitRules | None = None  # how to cut it; None: as the document was last cut
    # ``source_digest`` of the type and bytes; a spooled file's comes from the check that read it.
    digest: str = ""

    def __post_init__(self) -> None:
        if not self.digest:
            object.__setattr__(self, "digest", source_digest(self.source_type, pieces(self.data)))


@dataclass(frozen=True)
class ClaimedJob:
    """An ingestion job as its worker holds it: the ``ingest_job`` columns of the same names
    (``jobs.leased.claimed_as``), with its document's name and split rules."""

    id: str
    document_id: str
    dataset_id: str
    document_name: str
    version: int
    filename: str
    source_type: str
    attempts: int
    split_rules: SplitRules = DEFAULT_RULES


class JobQueue(LeasedQueue[IngestJob, ClaimedJob]):
    """``JobQueue(sessions, lease_seconds, store_key)``: the ingestion jobs of one vector store."""

    table = IngestJob
    active = ACTIVE

    def claimed(self, session: Session, row: IngestJob) -> ClaimedJob | None:
        return _claimed(session, row)

    def reported(self, session: Session, job: ClaimedJob, state: str) -> None:
        """The document shows its newest job's state (a deleted one took its job with it)."""
        document = session.get(Document, job.document_id)
        if document is not None and document.job_id == job.id:
            document.status = state

    async def submit(self, dataset_id: str, upload: Upload) -> Document:
        """The document row, created or found by name, with a new queued job holding the upload.
        A document with a job still queued or running is refused: the two versions would race."""
        async with self._sessions.begin() as session:
            document = await session.run_sync(lambda s: _submit(s, dataset_id, upload, self))
            detail = f"dataset {dataset_id}, source {upload.source_type}"
            record_action(session, "document.add", "document", document.id, document.name, detail)
        return document

    async def served(self, dataset_id: str, upload: Upload) -> Document | None:
        """The document, when it is ready and serves exactly this upload: nothing to queue (the
        caller still checks that the store holds its points)."""

        def work(session: Session) -> Document | None:
            document = _document_of(session, dataset_id, upload)
            unchanged = (
                document is not None
                and document.status == DocumentState.READY
                and document.active_version > 0
                and document.source_hash == upload.digest
                and (upload.rules is None or upload.rules == SplitRules.from_json(document.split_rules))
            )
            return document if unchanged else None

        return await run_read(self._sessions, work)

    def source(self, job_id: str) -> AsyncIterator[bytes]:
        """The job's original, piece by piece, as the worker feeds it to its parser."""
        return read_source(self._sessions, job_id)

    async def finish(self, job: ClaimedJob, holder: str, outcome: Outcome) -> bool:
        """End the job and update its document in one transaction; False when it was not ours."""
        return await self.close_job(
            job, holder, outcome.state, outcome.error, lambda session, _row: _finished(session, job, outcome)
        )

    async def cancel(self, dataset_id: str, document_id: str) -> Document:
        """A queued job ends at once; a running one is flagged and its worker stops at its next
        report (within one embedding batch)."""
        async with self._sessions.begin() as session:
            document = await session.run_sync(lambda s: _cancel(s, dataset_id, document_id))
            record_action(session, "document.cancel", "document", document.id, document.name, f"dataset {dataset_id}")
        return document

    async def document(self, dataset_id: str, document_id: str) -> tuple[Document, IngestJob | None]:
        def work(session: Session) -> tuple[Document, IngestJob | None]:
            # One statement, so both rows come from one snapshot: read apart, PostgreSQL's read
            # committed could show a document still embedding beside its job already finished.
            row = session.execute(
                _WITH_JOB.where(Document.id == document_id, Document.dataset_id == dataset_id)
            ).first()
            if row is None:
                raise _no_document(dataset_id, document_id)
            return row[0], row[1]

        return await run_read(self._sessions, work)

    async def documents(self, dataset_id: str) -> list[tuple[Document, IngestJob | None]]:
        def work(session: Session) -> list[tuple[Document, IngestJob | None]]:
            if session.get(Dataset, dataset_id) is None:
                raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
            rows = session.execute(
                _WITH_JOB.where(Document.dataset_id == dataset_id).order_by(Document.created_at, Document.name)
            )
            return [(d, j) for d, j in rows.all()]

        return await run_read(self._sessions, work)

    async def pending(self) -> int:
        """Jobs not finished yet (queued or running), for tests and the bench."""
        return await run_read(
            self._sessions,
            lambda s: int(
                s.scalar(select(func.count()).select_from(IngestJob).where(IngestJob.state.in_(ACTIVE))) or 0
            ),
        )


@dataclass(frozen=True)
class Outcome:
    """How a job ended. ``published`` is the version the store now serves for a ready job, with
    the document's new figures; a failed or cancelled job leaves the served version as it was."""

    state: str
    error: Said | None = None
    published: bool = False
    paragraph_count: int = 0
    char_length: int = 0
    content_hash: str = ""


def _no_document(dataset_id: str, document_id: str) -> NotFound:
    return NotFound(said("document_does_not_exist_dataset", document_id=document_id, dataset_id=dataset_id))


def _document_in(session: Session, dataset_id: str, document_id: str) -> Document:
    document = session.get(Document, document_id)
    if document is None or document.dataset_id != dataset_id:
        raise _no_document(dataset_id, document_id)
    return document


def _submit(session: Session, dataset_id: str, upload: Upload, queue: JobQueue) -> Document:
    dataset = session.get(Dataset, dataset_id)
    if dataset is None:
        raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
    if dataset.embedding_pending_id is not None:  # the copy for the new model would miss it
        raise Conflict(said("dataset_being_embedded_again_another_model_2", dataset_name=f"{dataset.name!r}"))
    document = _document_of(session, dataset_id, upload, lock=True)
    if document is None:
        name = _free_name(session, dataset_id, upload)
        document = Document(dataset_id=dataset_id, name=name, content_hash="", active_version=0)
        session.add(document)
        session.flush()
    elif document.job_id is not None and _job_blocks(session, document.job_id, queue.store_key):
        raise Conflict(said("document_still_being_ingested_wait_finish", upload_name=f"{upload.name!r}"))
    versions = session.scalar(select(func.max(IngestJob.version)).where(IngestJob.document_id == document.id))
    job = queue.new_row(
        document_id=document.id,
        dataset_id=dataset_id,
        version=max(int(versions or 0), document.active_version) + 1,
        filename=upload.filename,
        source_type=upload.source_type,
    )
    session.add(job)
    session.flush()
    store_source(session, job.id, upload.data)
    document.job_id, document.status, document.error = job.id, DocumentState.QUEUED, None
    document.source_type = upload.source_type
    document.source_hash = upload.digest
    if upload.rules is not None:
        document.split_rules = "" if upload.rules == DEFAULT_RULES else upload.rules.to_json()
    # A page's validators and check come with it; a file uploaded under a page's name replaces
    # the page for good, so a later sync does not bring the page back.
    document.source_url, document.source_etag, document.source_modified = (
        upload.source_url,
        upload.etag,
        upload.modified,
    )
    document.source_checked_at = utcnow() if upload.source_url else None
    document.source_state, document.source_note = "", None
    return document


def _document_of(session: Session, dataset_id: str, upload: Upload, lock: bool = False) -> Document | None:
    """The document an upload is a new version of: a web page's is the one of its address
    (whatever its name), any other upload's the one of its name."""
    field = Document.source_url == upload.source_url if upload.source_url else Document.name == upload.name
    query = select(Document).where(Document.dataset_id == dataset_id, field).limit(1)
    return session.scalar(query.with_for_update() if lock else query)


def _free_name(session: Session, dataset_id: str, upload: Upload) -> str:
    """A new web page's name: its title, unless another document of the dataset has that name
    (another page, a file); then the title with the page's address, so neither replaces the other."""
    taken = session.scalar(select(Document.id).where(Document.dataset_id == dataset_id, Document.name == upload.name))
    if not upload.source_url or taken is None:
        return upload.name
    where = upload.source_url.split("://", 1)[-1]
    return f"{upload.name}（{where}）"[:MAX_NAME_CHARS]


def _job_blocks(session: Session, job_id: str, store_key: str) -> bool:
    """Whether the document's newest job still runs, so a new upload would race it. A job left
    for another vector store that no process works on (its lease ran out, or it was never
    claimed) never will be once uploads go to this store: it is ended as superseded."""
    job = session.get(IngestJob, job_id, with_for_update=True)
    if job is None or job.state not in ACTIVE:
        return False
    if job.store_key != store_key and (job.lease_until is None or job.lease_until < utcnow()):
        job.state, job.error, job.holder = JobState.FAILED, said("superseded_upload_another_vector_store"), None
        delete_source(session, job.id)
        return False
    return True


def _claimed(session: Session, job: IngestJob) -> ClaimedJob | None:
    document = session.get(Document, job.document_id)
    if document is None:
        return None
    return claimed_as(
        ClaimedJob, job, document_name=document.name, split_rules=SplitRules.from_json(document.split_rules)
    )


def _finished(session: Session, job: ClaimedJob, outcome: Outcome) -> None:
    """What a job's end means besides its row: its original goes, and its document (unless a
    newer job has it) takes the published version and its new status."""
    delete_source(session, job.id)
    document = session.get(Document, job.document_id)
    if document is None or document.job_id != job.id:
        return
    if outcome.published:
        document.active_version = job.version
        document.paragraph_count = outcome.paragraph_count
        document.char_length = outcome.char_length
        document.content_hash = outcome.content_hash
    _settle(document, outcome)


CANCELLED_BY_OPERATOR = said("ingestion_cancelled_operator")
INGESTION_FAILED = said("ingestion_failed")  # a failed job that said nothing more
STILL_SERVED = "previous_version_still_searchable"  # "{failure} The previous version is still …"


def _settle(document: Document, outcome: Outcome) -> None:
    """The document's status after its job ended: a cancelled re-upload leaves a served document
    as it was (ready), a cancelled first upload reads cancelled; a failure is shown, saying
    whether an earlier version still serves."""
    if outcome.state == JobState.READY or (outcome.state == JobState.CANCELLED and document.active_version):
        document.status, document.error = DocumentState.READY, None
    elif outcome.state == JobState.CANCELLED:
        document.status, document.error = DocumentState.CANCELLED, CANCELLED_BY_OPERATOR
    else:
        document.status = DocumentState.FAILED
        failure = outcome.error or INGESTION_FAILED
        document.error = said(STILL_SERVED, failure=failure) if document.active_version else failure
    if outcome.state != JobState.READY and document.active_version:
        # The stored original is no longer what is served: the next upload or sync is whole.
        document.source_hash = document.source_etag = document.source_modified = ""


def _cancel(session: Session, dataset_id: str, document_id: str) -> Document:
    document = _document_in(session, dataset_id, document_id)
    job = session.get(IngestJob, document.job_id, with_for_update=True) if document.job_id else None
    if job is None or job.state not in ACTIVE:
        raise Conflict(said("document_has_no_ingestion_queued_running", document_name=f"{document.name!r}"))
    if job.holder is None:
        job.state = JobState.CANCELLED
        delete_source(session, job.id)
        _settle(document, Outcome(JobState.CANCELLED))
    else:
        job.cancel_requested = True
    return document
