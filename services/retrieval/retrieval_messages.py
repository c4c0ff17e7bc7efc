"""Conversions between the retrieval service's domain objects and its protobuf messages."""

from __future__ import annotations

import datetime as dt

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.tables import Dataset, Document, EmbeddingJob, IngestJob
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_TOP_N
from kbcore.models.base import ChatMessage, PartSupport
from kbcore.vocabulary import DOCUMENT_STATUS, EMBEDDING_SWITCH_STATE, PART_VERDICT, ROLE, SEARCH_MODE
from services.retrieval.ingestion.jobs.states import ACTIVE
from services.retrieval.search.loop import Assessed, LoopResult, Retrieving
from services.retrieval.search.query import SearchSettings
from services.retrieval.store.base import AttachedQuestion, Hit, SearchMode, StoredParagraph

DEFAULT_SEARCH = SearchSettings()


def search_settings(message: common_pb2.SearchSettings) -> SearchSettings:
    """Unset fields take the defaults; out-of-range numbers are refused, not guessed at."""
    top_n = message.top_n or DEFAULT_SEARCH.top_n
    if not 1 <= top_n <= MAX_TOP_N:
        raise InvalidRequest(f"top_n must be between 1 and {MAX_TOP_N}, got {top_n}")
    similarity = message.similarity if message.HasField("similarity") else DEFAULT_SEARCH.similarity
    if not 0.0 <= similarity <= 1.0:
        raise InvalidRequest(f"similarity must be between 0 and 1, got {similarity:g}")
    mode_name = SEARCH_MODE.name(message.search_mode)
    if message.search_mode and not mode_name:
        raise InvalidRequest(f"unknown search_mode {message.search_mode}")
    mode = SearchMode(mode_name) if mode_name else DEFAULT_SEARCH.mode
    return SearchSettings(top_n=top_n, similarity=similarity, mode=mode)


def history(messages: list[common_pb2.Message]) -> list[ChatMessage]:
    return [ChatMessage(ROLE.name(m.role) or "user", m.content) for m in messages]


def paragraph(hit: Hit, round_no: int = 0, rerank_score: float | None = None) -> common_pb2.Paragraph:
    return common_pb2.Paragraph(
        id=hit.id,
        dataset_id=hit.dataset_id,
        document_id=hit.document_id,
        document_name=hit.document_name,
        title=hit.title,
        content=hit.content,
        score=hit.score,
        round=round_no,
        rerank_score=rerank_score,
        matched_question=hit.matched_question,
    )


def progress(event: Retrieving | Assessed) -> pb.RetrieveResponse:
    if isinstance(event, Retrieving):
        searching = common_pb2.Retrieving(round=event.round, query=event.query, queries=event.queries or (event.query,))
        message = common_pb2.Progress(retrieving=searching)
    else:
        assessed = common_pb2.Assessed(
            round=event.round, sufficient=event.sufficient, missing=event.missing, continues=event.continues
        )
        message = common_pb2.Progress(assessed=assessed)
    return pb.RetrieveResponse(progress=message)


def result(outcome: LoopResult, mode: SearchMode = DEFAULT_SEARCH.mode) -> pb.RetrieveResponse:
    """The loop's result, naming the search mode its scores come from (the pages label them by it)."""
    return pb.RetrieveResponse(
        result=common_pb2.RetrievalResult(
            problem_text=outcome.problem_text,
            paragraphs=[paragraph(e.hit, e.round, e.rerank_score) for e in outcome.evidence],
            rounds=[
                common_pb2.RoundTrace(
                    round=r.round,
                    queries=r.queries,
                    new_paragraph_ids=r.new_paragraph_ids,
                    total_evidence=r.total_evidence,
                    sufficient=r.sufficient,
                    missing=r.missing,
                    next_queries=r.next_queries,
                    reranked=r.reranked,
                    rerank_error=r.rerank_error,
                    assessment_skipped=r.assessment_skipped,
                    assessed_by=r.assessed_by,
                )
                for r in outcome.rounds
            ],
            stop_reason=outcome.stop_reason,
            sufficient=outcome.sufficient,
            missing=outcome.missing,
            run_time=outcome.run_time,
            rewrite_error=outcome.rewrite_error,
            part_support=[part_support(s) for s in outcome.support],
            search_mode=SEARCH_MODE.value(mode.value),
        )
    )


def part_support(support: PartSupport) -> common_pb2.PartSupport:
    return common_pb2.PartSupport(
        part=support.part,
        verified=support.verified,
        verdict=PART_VERDICT.value(support.verdict),
        quotes=[
            common_pb2.SupportQuote(
                paragraph_id=q.paragraph_id, document_name=q.document_name, sentence=q.sentence, score=q.score
            )
            for q in support.quotes
        ],
    )


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
                error=switch.error,
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
        error=row.error,
        source_type=row.source_type,
        updated_at=(row.updated_at or row.created_at).isoformat() + "Z",
        source_url=row.source_url,
        source_checked_at=_when(row.source_checked_at),
        source_state=row.source_state,
        source_note=row.source_note,
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
