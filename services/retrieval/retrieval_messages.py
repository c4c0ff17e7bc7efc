"""Conversions between the retrieval service's catalogue (datasets, documents, paragraphs and
their questions) and its protobuf messages. The search's own, which name the search loop's
types, are ``services.retrieval.search.search_messages``."""

from __future__ import annotations

import datetime as dt

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.tables import Dataset, Document, EmbeddingJob, IngestJob
from kbcore.refusals.status_details import stored_fields
from kbcore.vocabulary import DOCUMENT_STATUS, EMBEDDING_SWITCH_STATE
from services.retrieval.ingestion.jobs.states import ACTIVE
from services.retrieval.store.base import AttachedQuestion, StoredParagraph


def dataset(
    row: Dataset,
    documents: int = 0,
    paragraphs: int = 0,
    *,
    default_dimension: int = 0,
    model_name: str = "",
    switch: EmbeddingJob | None = None,
) -> pb.Dataset:
    """A dataset with its embedding model: a dimension of 0 (a dataset older than the
    column) is the default embedder's, ``switch`` its newest change of model."""
    message = pb.Dataset(
        id=row.id,
        name=row.name,
        description=row.description,
        document_count=documents,
        paragraph_count=paragraphs,
        created_at=row.created_at.isoformat() + "Z",
        embedding_model_id=row.embedding_model_id,
        embedding_dimension=row.embedding_dimension or default_dimension,
        embedding_model_name=model_name,
        sync_hours=row.sync_hours,
        sync_due_at=_when(row.sync_due_at),
    )
    if switch is not None:
        message.embedding_switch.CopyFrom(
            pb.EmbeddingSwitch(
                to_model_id=switch.to_model_id,
                state=EMBEDDING_SWITCH_STATE.value(switch.state, pb.EMBEDDING_SWITCH_STATE_UNSPECIFIED),
                progress_done=switch.done,
                progress_total=switch.total,
                **stored_fields("error", switch.error),
            )
        )
    return message


def document(row: Document, job: IngestJob | None = None) -> pb.Document:
    """A document with its status; progress comes from its newest job while that job runs."""
    running = job is not None and job.state in ACTIVE
    return pb.Document(
        id=row.id,
        dataset_id=row.dataset_id,
        name=row.name,
        paragraph_count=row.paragraph_count,
        char_length=row.char_length,
        created_at=row.created_at.isoformat() + "Z",
        status=DOCUMENT_STATUS.value(row.status, pb.DOCUMENT_STATUS_READY),
        progress_done=job.done if job is not None and running else 0,
        progress_total=job.total if job is not None and running else 0,
        **stored_fields("error", row.error),
        source_type=row.source_type,
        updated_at=(row.updated_at or row.created_at).isoformat() + "Z",
        source_url=row.source_url,
        source_checked_at=_when(row.source_checked_at),
        source_state=row.source_state,
        **stored_fields("source_note", row.source_note),
    )


def _when(moment: dt.datetime | None) -> str:
    """RFC 3339 in UTC, or "" for never."""
    return moment.isoformat() + "Z" if moment is not None else ""


def attached_question(q: AttachedQuestion) -> pb.AttachedQuestion:
    return pb.AttachedQuestion(
        id=q.id, dataset_id=q.dataset_id, document_id=q.document_id, paragraph_id=q.paragraph_id, content=q.content
    )


def managed_paragraph(p: StoredParagraph) -> pb.ManagedParagraph:
    return pb.ManagedParagraph(
        id=p.id,
        dataset_id=p.dataset_id,
        document_id=p.document_id,
        title=p.title,
        content=p.content,
        position=p.position,
        enabled=p.enabled,
    )
