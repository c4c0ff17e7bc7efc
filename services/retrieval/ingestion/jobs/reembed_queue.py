"""Changing a dataset's embedding model, in SQL: the ``embedding_job`` rows.

A change is one job per dataset, because what it ends with is one flip of the whole dataset:
every served paragraph is embedded again by the new model into the new model's store, staged,
and the dataset's model changes in one transaction once all of them are there. Until then the
dataset keeps its model, and searches keep using the old vectors. The job is leased exactly as
an ingestion job is, by the same queue class (``jobs.leased``: claimed by one process of the same
store identity, its lease renewed with each progress report, taken over when its holder dies,
every write conditional on still holding it). What a dataset shows of its newest change is read
by ``services.retrieval.embedding.model_switches``.

While a change runs, uploads and paragraph edits of the dataset are refused (the copy would miss
them); a change is refused while documents are being ingested, and when the dataset shares an
application with other datasets (``kbcore.embedding_rule``: it would mix models).

A request that queues or cancels a change is an operator's ``dataset.update`` in the audit trail,
recorded in the transaction that queues it; what the background job does after is not
(``kbcore.db.audit``; docs/access.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.audit import record_action
from kbcore.db.engine import run_write
from kbcore.db.tables import Application, Dataset, Document, EmbeddingJob, IngestJob, ModelEndpoint
from kbcore.embedding_rule import model_label
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.vocabulary import EMBEDDING_SWITCH_STATE
from kbcore.words.said import Said, said
from services.retrieval.ingestion.jobs.leased import Control, LeasedQueue, claimed_as, release
from services.retrieval.ingestion.jobs.states import ACTIVE as INGESTING


class SwitchState:
    QUEUED = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_QUEUED)
    EMBEDDING = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_EMBEDDING)
    READY = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_READY)
    FAILED = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_FAILED)
    CANCELLED = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_CANCELLED)


RUNNING = (SwitchState.QUEUED, SwitchState.EMBEDDING)
CANCELLED_BY_OPERATOR = said("cancelled_operator")


@dataclass(frozen=True)
class Change:
    """A requested model: the registered id ("" = the default) and the size of its vectors."""

    model_id: str
    dimension: int
    label: Said  # how messages name it


@dataclass(frozen=True)
class Requested:
    """What a request did: ``queued`` a job for the switcher; ``audit`` says what changed ("": nothing)."""

    queued: bool
    dataset_name: str = ""
    audit: str = ""


@dataclass(frozen=True)
class ClaimedSwitch:
    """A change of model as its worker holds it: the ``embedding_job`` columns of the same names
    (``jobs.leased.claimed_as``)."""

    id: str
    dataset_id: str
    from_model_id: str
    from_dimension: int
    to_model_id: str
    to_dimension: int
    attempts: int


class SwitchQueue(LeasedQueue[EmbeddingJob, ClaimedSwitch]):
    """``SwitchQueue(sessions, lease_seconds, store_key)``: the changes of model of one vector
    store's datasets. Progress is reported in ``SwitchState.EMBEDDING``."""

    table = EmbeddingJob
    active = RUNNING

    def claimed(self, session: Session, row: EmbeddingJob) -> ClaimedSwitch:
        return claimed_as(ClaimedSwitch, row)

    async def request(self, dataset_id: str, change: Change) -> bool:
        """Start re-embedding the dataset with ``change``'s model; naming the model it has while a
        change runs cancels that change. True when a job was queued."""
        async with self._sessions.begin() as session:
            done = await session.run_sync(lambda s: _request(s, dataset_id, change, self))
            if done.audit:
                record_action(session, "dataset.update", "dataset", dataset_id, done.dataset_name, done.audit)
        return done.queued

    async def flip(self, job: ClaimedSwitch, holder: str) -> str:
        """The dataset takes the new model and the job ends ready, in one transaction, unless the
        job is no longer ours or a cancel came first (``Control``)."""

        def work(session: Session) -> str:
            control, row = self.look(session, job.id, holder)
            if control != Control.GO or row is None:
                return control
            dataset = session.get(Dataset, job.dataset_id, with_for_update=True)
            if dataset is None:
                return Control.DELETED
            dataset.embedding_model_id, dataset.embedding_dimension = job.to_model_id, job.to_dimension
            dataset.embedding_pending_id, dataset.embedding_error = None, None
            row.done = row.total
            release(row, SwitchState.READY, None)
            return Control.GO

        return await run_write(self._sessions, work)

    async def end(self, job: ClaimedSwitch, holder: str, state: str, error: Said) -> bool:
        """The change failed or was cancelled: the dataset stays on its model and says why."""
        return await self.close_job(job, holder, state, error, lambda session, row: _kept_model(session, row, error))


def _ended(session: Session, row: EmbeddingJob, state: str, error: Said) -> None:
    release(row, state, error)
    _kept_model(session, row, error)


def _kept_model(session: Session, row: EmbeddingJob, error: Said) -> None:
    """The dataset of a change that ended without its flip keeps its model, and says why."""
    dataset = session.get(Dataset, row.dataset_id)
    if dataset is not None and dataset.embedding_pending_id == row.to_model_id:
        dataset.embedding_pending_id = None
        dataset.embedding_error = said("embedding_change_not_made", reason=error)


def _request(session: Session, dataset_id: str, change: Change, queue: SwitchQueue) -> Requested:
    dataset = session.get(Dataset, dataset_id, with_for_update=True)
    if dataset is None:
        raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
    if dataset.embedding_pending_id is not None:
        if change.model_id == dataset.embedding_model_id:
            _cancel(session, dataset_id)
            return Requested(False, dataset.name, "embedding model (change cancelled)")
        if change.model_id == dataset.embedding_pending_id:
            return Requested(False)
        raise Conflict(said("dataset_already_being_embedded_again_another", dataset_name=f"{dataset.name!r}"))
    if change.model_id == dataset.embedding_model_id:
        return Requested(False)
    _require_idle(session, dataset)
    _require_alone(session, dataset, change)
    session.add(
        queue.new_row(
            dataset_id=dataset_id,
            from_model_id=dataset.embedding_model_id,
            from_dimension=dataset.embedding_dimension,
            to_model_id=change.model_id,
            to_dimension=change.dimension,
        )
    )
    dataset.embedding_pending_id, dataset.embedding_error = change.model_id, None
    return Requested(True, dataset.name, "embedding model")


def _require_idle(session: Session, dataset: Dataset) -> None:
    busy = session.scalar(
        select(func.count())
        .select_from(IngestJob)
        .join(Document, Document.job_id == IngestJob.id)
        .where(IngestJob.dataset_id == dataset.id, IngestJob.state.in_(INGESTING))
    )
    if busy:
        raise Conflict(said("dataset_has_documents_being_ingested_change", dataset_name=f"{dataset.name!r}"))


def _require_alone(session: Session, dataset: Dataset, change: Change) -> None:
    """An application searches one embedding model: a dataset it searches together with others
    cannot change alone (the others keep theirs)."""
    for application in session.scalars(select(Application)).all():  # few; JSON lists differ per database
        others = [d for d in (application.dataset_ids or []) if d != dataset.id]
        if dataset.id not in (application.dataset_ids or []) or not others:
            continue
        names = session.scalars(select(Dataset.name).where(Dataset.id.in_(others))).all()
        listed = ", ".join(repr(n) for n in names)
        model = session.get(ModelEndpoint, dataset.embedding_model_id) if dataset.embedding_model_id else None
        raise InvalidRequest(
            said(
                "dataset_searched_together_application_all_changing",
                dataset_name=f"{dataset.name!r}",
                listed=listed,
                application_name=f"{application.name!r}",
                model_label_dataset_embedding_model_id_model_name_if_model_else=model_label(
                    dataset.embedding_model_id, model.name if model else ""
                ),
                change_label=change.label,
            )
        )


def _cancel(session: Session, dataset_id: str) -> None:
    row = session.scalar(
        select(EmbeddingJob)
        .where(EmbeddingJob.dataset_id == dataset_id, EmbeddingJob.state.in_(RUNNING))
        .with_for_update()
    )
    if row is None:
        dataset = session.get(Dataset, dataset_id)
        if dataset is not None:  # a change whose job is gone: nothing can finish it
            dataset.embedding_pending_id = None
        return
    if row.holder is None:
        _ended(session, row, SwitchState.CANCELLED, CANCELLED_BY_OPERATOR)
    else:
        row.cancel_requested = True
