"""The worker that changes a dataset's embedding model: every retrieval process runs
one beside its ingestion worker, claiming ``embedding_job`` rows (``reembed_queue``).

A job copies the dataset's served paragraphs from the old model's store into the new model's
store, each embedded again by the new model and written staged under its own id, version,
position and enabled flag (records and improvements keep pointing at the same ids). A resumed
job skips the points already there. Then each document is published in the new store, the
dataset flips to the new model in one transaction, and its old vectors are deleted; until the
flip every search uses the old ones. A failure or cancel drops what was written in the new
store, and the dataset keeps its model with the reason shown.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read
from kbcore.db.tables import Document
from kbcore.errors import InvalidRequest, NotFound, Refused
from kbcore.words.said import Said, said
from services.retrieval.embedding.spaces import FLIP_GRACE_SECONDS, EmbeddingSpaces, Space
from services.retrieval.ingestion.jobs.claim_loop import ClaimingWorker
from services.retrieval.ingestion.jobs.embed_pipeline import embed_in_order
from services.retrieval.ingestion.jobs.leased import Control, worn_out
from services.retrieval.ingestion.jobs.reembed_queue import (
    CANCELLED_BY_OPERATOR,
    ClaimedSwitch,
    SwitchQueue,
    SwitchState,
)
from services.retrieval.store.base import ParagraphPoint, QuestionPoint, StoredParagraph
from services.retrieval.store.layout import indexed_text

log = logging.getLogger(__name__)

ServedDocument = tuple[str, int]  # document id, the version it serves


class Stopped(Exception):
    """A progress report said not to go on (``Control``)."""

    def __init__(self, control: str) -> None:
        super().__init__(control)
        self.control = control


class SwitchWorker(ClaimingWorker[ClaimedSwitch]):
    def __init__(
        self,
        queue: SwitchQueue,
        spaces: EmbeddingSpaces,
        sessions: async_sessionmaker[AsyncSession],
        poll: float,
        grace: float = FLIP_GRACE_SECONDS,
    ) -> None:
        super().__init__(queue.claim, poll, "reembed", "a re-embedding job")
        self._queue = queue
        self._spaces = spaces
        self._sessions = sessions
        self._grace = grace

    async def process(self, job: ClaimedSwitch) -> None:
        if worn_out(job.attempts):
            await self._give_up(
                job, said("stopped_times_without_finishing_service_restarted", job_attempts_1=job.attempts - 1)
            )
            return
        try:
            await self._switch(job)
        except Stopped as stop:
            await self._stopped(job, stop.control)
        except (InvalidRequest, NotFound, ValueError) as exc:  # a model that fails or answers wrongly
            await self._give_up(job, _words_of(exc))
        except Exception:
            log.exception("re-embedding job %s of dataset %s failed", job.id, job.dataset_id)
            await self._give_up(job, said("internal_error_stopped_service_log_has"))

    async def _switch(self, job: ClaimedSwitch) -> None:
        old = await self._spaces.space(job.from_model_id, job.from_dimension)
        new = await self._spaces.space(job.to_model_id, job.to_dimension)
        if job.attempts == 1:  # whatever an earlier, abandoned change left there
            await new.store.delete_dataset(job.dataset_id)
        documents = await self._served(job.dataset_id)
        paragraphs = [
            p for doc, version in documents for p in await old.store.document_paragraphs(job.dataset_id, doc, version)
        ]
        await self._copy(job, new, paragraphs)
        still = {doc for doc, _ in await self._served(job.dataset_id)}
        for doc, version in documents:  # a document deleted meanwhile must not come back
            if doc in still:
                await new.store.publish_version(job.dataset_id, doc, version)
            else:
                await new.store.delete_document(job.dataset_id, doc)
        await _copy_questions(job.dataset_id, old, new, still)
        control = await self._queue.flip(job, self.holder)
        if control != Control.GO:
            raise Stopped(control)
        # Searches that looked the dataset up a moment ago still read the old store: let them end.
        await asyncio.sleep(self._grace)
        try:  # the dataset is on the new model now: nothing that fails from here may undo that
            await old.store.delete_dataset(job.dataset_id)
        except Exception:
            log.exception("dataset %s: its vectors of the old model could not be deleted", job.dataset_id)
        log.info("dataset %s now uses embedding model %r", job.dataset_id, job.to_model_id or "default")

    async def _copy(self, job: ClaimedSwitch, new: Space, paragraphs: list[StoredParagraph]) -> None:
        """Every paragraph not yet in the new store, embedded by the new model (the ingestion's
        embedding loop) and written staged; progress reported after each write."""
        stored = await new.store.existing_ids([p.id for p in paragraphs])
        missing = [p for p in paragraphs if p.id not in stored]
        done, total = len(paragraphs) - len(missing), len(paragraphs)
        await self._look(job, done, total)

        async def write(offset: int, vectors: list[list[float]]) -> None:
            nonlocal done
            batch = missing[offset : offset + len(vectors)]
            await new.store.upsert([_staged(p, v) for p, v in zip(batch, vectors, strict=True)])
            done += len(batch)
            await self._look(job, done, total)  # raises Stopped, which ends the loop

        texts = [indexed_text(p.document_name, p.title, p.content) for p in missing]
        await embed_in_order(new.embedder, texts, write, lambda: True)

    async def _look(self, job: ClaimedSwitch, done: int, total: int) -> None:
        control = await self._queue.report(job, self.holder, SwitchState.EMBEDDING, done, total)
        if control != Control.GO:
            raise Stopped(control)

    async def _served(self, dataset_id: str) -> list[ServedDocument]:
        def work(session: Session) -> list[ServedDocument]:
            rows = session.execute(
                select(Document.id, Document.active_version).where(
                    Document.dataset_id == dataset_id, Document.active_version > 0
                )
            )
            return [(doc, int(version)) for doc, version in rows.all()]

        return await run_read(self._sessions, work)

    async def _stopped(self, job: ClaimedSwitch, control: str) -> None:
        """A cancel ends the job; a lost lease leaves it to its new holder, which resumes from the
        points written; a deleted dataset took its job with it."""
        if control == Control.CANCELLED:
            await self._give_up(job, CANCELLED_BY_OPERATOR, SwitchState.CANCELLED)
        elif control == Control.DELETED:
            await self._drop_new(job)

    async def _give_up(self, job: ClaimedSwitch, error: Said, state: str = SwitchState.FAILED) -> None:
        await self._drop_new(job)
        if not await self._queue.end(job, self.holder, state, error):
            log.info("re-embedding job %s ended elsewhere (taken over or deleted)", job.id)

    async def _drop_new(self, job: ClaimedSwitch) -> None:
        """Nothing half-built stays in the new model's store (the old one was never touched)."""
        try:
            new = await self._spaces.space(job.to_model_id, job.to_dimension)
            await new.store.delete_dataset(job.dataset_id)
        except Exception:  # a model that cannot even be opened wrote nothing
            log.warning("could not clean up re-embedding job %s in the new store", job.id, exc_info=True)


async def _copy_questions(dataset_id: str, old: Space, new: Space, documents: set[str]) -> None:
    """The questions attached to the dataset's paragraphs, embedded by the new model. After the
    paragraphs are published there: a publication removes the questions of paragraphs it does
    not have, which before it is all of them."""
    questions = [q for q in await old.store.questions(dataset_id) if q.document_id in documents]
    points = [
        QuestionPoint(
            q.id, q.dataset_id, q.document_id, q.paragraph_id, q.content, await new.embedder.embed_query(q.content)
        )
        for q in questions
    ]
    await new.store.upsert_questions(points)


def _staged(paragraph: StoredParagraph, vector: list[float]) -> ParagraphPoint:
    """The paragraph as the new model's store gets it: the same payload, version and enabled
    state, the new vector, staged until its document is published there."""
    return ParagraphPoint.from_payload(
        paragraph.id,
        paragraph.to_payload(),
        vector=vector,
        version=paragraph.version,
        searchable=False,
        enabled=paragraph.enabled,
    )


def _words_of(failure: Exception) -> Said:
    """What a change of model that failed says: a refusal's words; a model's answer that did not
    fit (a ValueError) as a failure in general."""
    return (failure.words if isinstance(failure, Refused) else None) or said("embedding_model_answered_wrongly")
