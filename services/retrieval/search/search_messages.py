"""Conversions between the search's domain objects (the loop's events and result, one query's
hits and settings) and the retrieval service's protobuf messages, for the search RPCs.

They name the search loop's own types, so they live in ``search`` beside the RPCs that use
them; the catalogue's conversions stay in ``services.retrieval.retrieval_messages``, which
imports nothing of ``search``."""

from __future__ import annotations

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_TOP_N
from kbcore.models.base import ChatMessage, PartSupport
from kbcore.refusals.status_details import stored_fields
from kbcore.vocabulary import PART_VERDICT, ROLE, SEARCH_MODE
from kbcore.words.said import said
from services.retrieval.search.loop import Assessed, LoopResult, Retrieving
from services.retrieval.search.query import SearchSettings
from services.retrieval.store.base import Hit, SearchMode

DEFAULT_SEARCH = SearchSettings()


def search_settings(message: common_pb2.SearchSettings) -> SearchSettings:
    """Unset fields take the defaults; out-of-range numbers are refused, not guessed at."""
    top_n = message.top_n or DEFAULT_SEARCH.top_n
    if not 1 <= top_n <= MAX_TOP_N:
        raise InvalidRequest(said("top_n_must_be_between_1", max_top_n=MAX_TOP_N, top_n=top_n))
    similarity = message.similarity if message.HasField("similarity") else DEFAULT_SEARCH.similarity
    if not 0.0 <= similarity <= 1.0:
        raise InvalidRequest(said("similarity_must_be_between_0_1", similarity=f"{similarity:g}"))
    mode_name = SEARCH_MODE.name(message.search_mode)
    if message.search_mode and not mode_name:
        raise InvalidRequest(said("unknown_search_mode", message_search_mode=message.search_mode))
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
            **stored_fields("rewrite_error", outcome.rewrite_error),
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
