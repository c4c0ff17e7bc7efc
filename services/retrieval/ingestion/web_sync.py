"""Web documents kept fresh: each page fetched again, now or on its dataset's schedule, costing
nothing when it did not change.

A sync asks the page's server with the validators of the served fetch (``If-None-Match`` with
its ETag, ``If-Modified-Since`` with its Last-Modified): an unchanged page answers 304 with no
body, and nothing is parsed or embedded. A server that sends the page anyway (no validators, or
it ignores them) costs one download: the same bytes as the served fetch queue nothing either.
A changed page is queued as a new version of its document, which embeds only the paragraphs
whose text changed (``unchanged``). A page that answers 404 or 410 is marked ``gone`` and keeps
serving what it last said (an operator deletes it, or it comes back); one that cannot be
reached is marked ``unreachable`` with the reason, also serving on.

The schedule is per dataset (``sync_hours``, at least one hour). Every retrieval process looks
for a dataset whose sync is due; the one that moves its ``sync_due_at`` on (a conditional
UPDATE) syncs it, so with several replicas a dataset is synced once per period.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import Dataset, Document, IngestJob, utcnow
from kbcore.errors import InvalidRequest, NotFound
from kbcore.limits import MAX_SYNC_HOURS, MIN_SYNC_HOURS
from kbcore.words.said import Said, said
from services.retrieval.ingestion.jobs.claim_loop import ClaimingWorker
from services.retrieval.ingestion.jobs.queue import Upload
from services.retrieval.ingestion.jobs.states import ACTIVE
from services.retrieval.ingestion.jobs.uploads import web_upload
from services.retrieval.ingestion.parsing.web_fetch import (
    FetchedPage,
    FetchError,
    FetchGone,
    FetchPolicy,
    Validators,
    fetch_if_changed,
)

SYNC_CONCURRENCY = 4  # pages of one dataset fetched at once
GONE, UNREACHABLE = "gone", "unreachable"  # document.source_state; "" = the page is there


@dataclass(frozen=True)
class Synced:
    document_id: str
    outcome: pb.SyncOutcome
    message: Said  # what happened, in words


Submit = Callable[[str, Upload], Awaitable[None]]  # queue an upload as a new version of its document


def check_sync_hours(hours: int) -> None:
    """0 turns the schedule off; otherwise at least hourly and at most monthly."""
    if hours and not MIN_SYNC_HOURS <= hours <= MAX_SYNC_HOURS:
        raise InvalidRequest(
            said("sync_hours_must_be_0_no", min_sync_hours=MIN_SYNC_HOURS, max_sync_hours=MAX_SYNC_HOURS, hours=hours)
        )


class WebSync:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], fetch: FetchPolicy, submit: Submit) -> None:
        self._sessions = sessions
        self._fetch = fetch
        self._submit = submit

    async def sync_documents(self, dataset_id: str, document_ids: list[str]) -> list[Synced]:
        """These web documents of the dataset (none named: all of them), a few pages at a time."""
        documents = await run_read(self._sessions, lambda s: _web_documents(s, dataset_id, document_ids))
        gate = asyncio.Semaphore(SYNC_CONCURRENCY)

        async def one(document: Document, busy: bool) -> Synced:
            async with gate:
                return await self._sync(document, busy)

        return list(await asyncio.gather(*(one(document, busy) for document, busy in documents)))

    async def _sync(self, document: Document, busy: bool) -> Synced:
        if busy:
            return Synced(document.id, pb.SYNC_OUTCOME_BUSY, said("ingestion_document_queued_running"))
        served = bool(document.active_version and document.source_hash)
        validators = Validators(document.source_etag, document.source_modified) if served else Validators()
        try:
            fetched = await fetch_if_changed(document.source_url, self._fetch, validators)
        except FetchGone as exc:
            await self._mark(document.id, GONE, exc.words)
            return Synced(document.id, pb.SYNC_OUTCOME_GONE, said("document_keeps_serving_last_version", exc=exc))
        except FetchError as exc:
            await self._mark(document.id, UNREACHABLE, exc.words)
            return Synced(document.id, pb.SYNC_OUTCOME_FAILED, said("document_keeps_serving_last_version", exc=exc))
        if not isinstance(fetched, FetchedPage):
            await self._mark(document.id, "", None)
            return Synced(document.id, pb.SYNC_OUTCOME_UNCHANGED, said("page_not_modified_304"))
        upload = web_upload(document.name, document.source_url, fetched)
        if served and upload.digest == document.source_hash:
            await self._mark(document.id, "", None, Validators(upload.etag, upload.modified))
            return Synced(document.id, pb.SYNC_OUTCOME_UNCHANGED, said("page_same_served_version"))
        await self._submit(document.dataset_id, upload)
        return Synced(document.id, pb.SYNC_OUTCOME_QUEUED, said("page_changed_new_version_being_ingested"))

    async def _mark(
        self, document_id: str, state: str, note: Said | None, validators: Validators | None = None
    ) -> None:
        def work(session: Session) -> None:
            document = session.get(Document, document_id)
            if document is None:
                return  # deleted meanwhile
            document.source_checked_at, document.source_state, document.source_note = utcnow(), state, note
            if validators is not None:
                document.source_etag, document.source_modified = validators.etag, validators.modified

        await run_write(self._sessions, work)


def _web_documents(session: Session, dataset_id: str, document_ids: list[str]) -> list[tuple[Document, bool]]:
    """The dataset's web documents (or these: each must be one), each with whether a job of it is
    queued or running."""
    if session.get(Dataset, dataset_id) is None:
        raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
    query = select(Document).where(Document.dataset_id == dataset_id)
    if document_ids:
        query = query.where(Document.id.in_(document_ids))
    documents = list(session.scalars(query.order_by(Document.created_at, Document.name)))
    missing = set(document_ids) - {d.id for d in documents}
    if missing:
        raise NotFound(said("document_does_not_exist_dataset", document_id=sorted(missing)[0], dataset_id=dataset_id))
    not_web = [d.name for d in documents if not d.source_url]
    if document_ids and not_web:
        raise InvalidRequest(said("document_was_not_imported_web_page", not_web_0=f"{not_web[0]!r}"))
    jobs = {d.job_id for d in documents if d.job_id}
    running = set(session.scalars(select(IngestJob.id).where(IngestJob.id.in_(jobs), IngestJob.state.in_(ACTIVE))))
    for document in documents:
        session.expunge(document)
    return [(d, d.job_id in running) for d in documents if d.source_url]


class SyncSchedule(ClaimingWorker[str]):
    """Syncs the datasets whose schedule is due, one at a time, in every retrieval process."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], sync: WebSync, poll_seconds: float) -> None:
        super().__init__(self._due, poll_seconds, "web-sync", "a dataset due for its web sync")
        self._sessions = sessions
        self._sync = sync

    async def process(self, job: str) -> None:
        await self._sync.sync_documents(job, [])

    async def _due(self, holder: str) -> str | None:
        """A dataset whose sync is due, now ours: its next time moved on by a conditional UPDATE."""
        return await run_write(self._sessions, _claim_due)


def _claim_due(session: Session) -> str | None:
    now = utcnow()
    due = session.execute(
        select(Dataset.id, Dataset.sync_due_at, Dataset.sync_hours)
        .where(Dataset.sync_hours > 0, Dataset.sync_due_at <= now)
        .order_by(Dataset.sync_due_at)
        .limit(1)
    ).first()
    if due is None:
        return None
    dataset_id, was, hours = due
    moved = session.execute(
        update(Dataset)
        .where(Dataset.id == dataset_id, Dataset.sync_due_at == was)
        .values(sync_due_at=now + dt.timedelta(hours=hours))
    )
    return str(dataset_id) if moved.rowcount == 1 else None  # type: ignore[attr-defined]
