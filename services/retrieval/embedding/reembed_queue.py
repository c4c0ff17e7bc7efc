"""Changing a dataset's embedding model, in SQL: the ``embedding_job`` rows.

A change is one job per dataset, because what it ends with is one flip of the whole dataset:
every served paragraph is embedded again by the new model into the new model's store, staged,
and the dataset's model changes in one transaction once all of them are there. Until then the
dataset keeps its model, and searches keep using the old vectors. The job is leased exactly as
an ingestion job is, by the same code (``jobs.leased``: claimed by one process of the same store
identity, its lease renewed with each progress report, taken over when its holder dies, every
write conditional on still holding it).

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
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.audit import record_action
from kbcore.db.engine import run_read, run_write
from kbcore.db.tables import Application, Dataset, Document, EmbeddingJob, IngestJob, ModelEndpoint
from kbcore.embedding_rule import model_label
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.vocabulary import EMBEDDING_SWITCH_STATE
from services.retrieval.ingestion.jobs.leased import Control, Leases, claim_if_waiting, release
from services.retrieval.ingestion.jobs.states import ACTIVE as INGESTING


class SwitchState:
    QUEUED = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_QUEUED)
    EMBEDDING = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_EMBEDDING)
    READY = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_READY)
    FAILED = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_FAILED)
    CANCELLED = EMBEDDING_SWITCH_STATE.name(pb.EMBEDDING_SWITCH_STATE_CANCELLED)


RUNNING = (SwitchState.QUEUED, SwitchState.EMBEDDING)
CANCELLED_BY_OPERATOR = "cancelled by an operator"


@dataclass(frozen=True)
class Change:
    """A requested model: the registered id ("" = the default) and the size of its vectors."""

    model_id: str
    dimension: int
    label: str  # how messages name it


@dataclass(frozen=True)
class Requested:
    """What a request did: ``queued`` a job for the switcher; ``audit`` says what changed ("": nothing)."""

    queued: bool
    dataset_name: str = ""
    audit: str = ""


@dataclass(frozen=True)
class ClaimedSwitch:
    id: str
    dataset_id: str
    from_model_id: str
    from_dimension: int
    to_model_id: str
    to_dimension: int
    attempts: int


async def newest_switch(sessions: async_sessionmaker[AsyncSession], dataset_id: str) -> EmbeddingJob | None:
    return (await newest_switches(sessions, [dataset_id])).get(dataset_id)


async def newest_switches(
    sessions: async_sessionmaker[AsyncSession], dataset_ids: list[str] | None = None
) -> dict[str, EmbeddingJob]:
    """Each dataset's (of these, or every dataset's) newest change of model, by dataset id."""

    def work(session: Session) -> dict[str, EmbeddingJob]:
        newest = select(EmbeddingJob.dataset_id, func.max(EmbeddingJob.created_at).label("at"))
        if dataset_ids is not None:
            newest = newest.where(EmbeddingJob.dataset_id.in_(dataset_ids))
        latest = newest.group_by(EmbeddingJob.dataset_id).subquery()
        rows = session.scalars(
            select(EmbeddingJob).join(
                latest, (latest.c.dataset_id == EmbeddingJob.dataset_id) & (latest.c.at == EmbeddingJob.created_at)
            )
        ).all()
        return {row.dataset_id: row for row in rows}

    return await run_read(sessions, work) if dataset_ids is None or dataset_ids else {}


class SwitchQueue:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], lease_seconds: float, store_key: str) -> None:
        self._sessions = sessions
        self._leases = Leases(EmbeddingJob, RUNNING, lease_seconds, store_key)

    async def request(self, dataset_id: str, change: Change) -> bool:
        """Start re-embedding the dataset with ``change``'s model; naming the model it has while a
        change runs cancels that change. True when a job was queued."""
        async with self._sessions.begin() as session:
            done = await session.run_sync(lambda s: _request(s, dataset_id, change, self._leases.store_key))
            if done.audit:
                record_action(session, "dataset.update", "dataset", dataset_id, done.dataset_name, done.audit)
        return done.queued

    async def claim(self, holder: str) -> ClaimedSwitch | None:
        return await claim_if_waiting(self._sessions, self._leases, lambda s: self._leases.claim(s, holder, _claimed))

    async def report(self, job: ClaimedSwitch, holder: str, done: int, total: int) -> str:
        """Record progress and renew the lease; says whether to go on (``jobs.leased.Control``)."""

        return await run_write(
            self._sessions, lambda s: self._leases.renew(s, job.id, holder, SwitchState.EMBEDDING, done, total)
        )

    async def flip(self, job: ClaimedSwitch, holder: str) -> str:
        """The dataset takes the new model and the job ends ready, in one transaction, unless the
        job is no longer ours or a cancel came first (``Control``)."""

        def work(session: Session) -> str:
            control, row = self._leases.look(session, job.id, holder)
            if control != Control.GO or row is None:
                return control
            dataset = session.get(Dataset, job.dataset_id, with_for_update=True)
            if dataset is None:
                return Control.DELETED
            dataset.embedding_model_id, dataset.embedding_dimension = job.to_model_id, job.to_dimension
            dataset.embedding_pending_id, dataset.embedding_error = None, ""
            row.state, row.done, row.holder, row.lease_until = SwitchState.READY, row.total, None, None
            return Control.GO

        return await run_write(self._sessions, work)

    async def end(self, job: ClaimedSwitch, holder: str, state: str, error: str) -> bool:
        """The change failed or was cancelled: the dataset stays on its model and says why."""

        def work(session: Session) -> bool:
            row = self._leases.held(session, job.id, holder)
            if row is None:
                return False
            _ended(session, row, state, error)
            return True

        return await run_write(self._sessions, work)


def _ended(session: Session, row: EmbeddingJob, state: str, error: str) -> None:
    release(row, state, error)
    dataset = session.get(Dataset, row.dataset_id)
    if dataset is not None and dataset.embedding_pending_id == row.to_model_id:
        dataset.embedding_pending_id = None
        dataset.embedding_error = f"the change of embedding model was not made ({error}); the dataset keeps its model"


def _request(session: Session, dataset_id: str, change: Change, store_key: str) -> Requested:
    dataset = session.get(Dataset, dataset_id, with_for_update=True)
    if dataset is None:
        raise NotFound(f"dataset {dataset_id} does not exist")
    if dataset.embedding_pending_id is not None:
        if change.model_id == dataset.embedding_model_id:
            _cancel(session, dataset_id)
            return Requested(False, dataset.name, "embedding model (change cancelled)")
        if change.model_id == dataset.embedding_pending_id:
            return Requested(False)
        raise Conflict(
            f"dataset {dataset.name!r} is already being embedded again by another model; "
            "cancel that first (choose its current model again) or wait for it to finish"
        )
    if change.model_id == dataset.embedding_model_id:
        return Requested(False)
    _require_idle(session, dataset)
    _require_alone(session, dataset, change)
    session.add(
        EmbeddingJob(
            dataset_id=dataset_id,
            from_model_id=dataset.embedding_model_id,
            from_dimension=dataset.embedding_dimension,
            to_model_id=change.model_id,
            to_dimension=change.dimension,
            store_key=store_key,
            state=SwitchState.QUEUED,
            done=0,
            total=0,
            attempts=0,
            cancel_requested=False,
            error="",
        )
    )
    dataset.embedding_pending_id, dataset.embedding_error = change.model_id, ""
    return Requested(True, dataset.name, "embedding model")


def _require_idle(session: Session, dataset: Dataset) -> None:
    busy = session.scalar(
        select(func.count())
        .select_from(IngestJob)
        .join(Document, Document.job_id == IngestJob.id)
        .where(IngestJob.dataset_id == dataset.id, IngestJob.state.in_(INGESTING))
    )
    if busy:
        raise Conflict(
            f"dataset {dataset.name!r} has documents being ingested; change its embedding model once they are ready"
        )


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
            f"dataset {dataset.name!r} is searched together with {listed} by application {application.name!r}, "
            f"all on {model_label(dataset.embedding_model_id, model.name if model else '')}: "
            f"changing only this dataset to {change.label} "
            "would mix embedding models in one application; take it out of the application first"
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


def _claimed(row: EmbeddingJob) -> ClaimedSwitch:
    return ClaimedSwitch(
        id=row.id,
        dataset_id=row.dataset_id,
        from_model_id=row.from_model_id,
        from_dimension=row.from_dimension,
        to_model_id=row.to_model_id,
        to_dimension=row.to_dimension,
        attempts=row.attempts,
    )
