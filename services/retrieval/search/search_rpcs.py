"""SearchService: the retrieval loop for a question, a plain search, an evaluation of the loop
against questions with known answers, and grouping texts by meaning."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import Any

import services.retrieval.search.evaluation as evaluation
import services.retrieval.search.search_messages as convert
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from grpc_stubs.retrieval.v1 import retrieval_service_pb2_grpc as pb_grpc
from kbcore.errors import InvalidRequest, NotFound
from kbcore.limits import MAX_SEARCH_QUERY_CHARS
from kbcore.models.base import ChatMessage, EvidenceJudge, ModelClient
from kbcore.models.endpoints import EndpointClients
from kbcore.models.rerank import RerankEndpoints
from kbcore.rpc.error_mapping import Context, stream_errors, unary_errors
from kbcore.text.tokens import require_question_fits
from kbcore.words.said import said
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.search.grouping import group_texts
from services.retrieval.search.loop import (
    FIRST_QUERY_CHARS,
    Assessed,
    LoopLimits,
    LoopResult,
    RetrievalLoop,
    Retrieving,
)
from services.retrieval.search.query import Searcher, SearchSettings
from services.retrieval.search.rerank_step import RoundReranker, candidate_settings

# Evaluation cases run a few at a time: enough to overlap the model calls, not so many that an
# evaluation crowds out the chats the same service is answering.
CONCURRENT_CASES = 4


class SearchRpcs(pb_grpc.SearchServiceServicer):
    def __init__(
        self,
        catalog: Catalog,
        searcher: Searcher,
        model: ModelClient,
        limits: LoopLimits,
        embedder: Embedder,
        endpoints: EndpointClients | None = None,
        reranks: RerankEndpoints | None = None,
        judge: EvidenceJudge | None = None,
    ):
        """``model`` is the deployment's auxiliary model; ``endpoints`` the registered ones a
        request may name instead (an application's choice), ``reranks`` the rerank calls it may
        ask for. ``embedder`` groups texts; ``catalog`` knows which datasets exist. ``judge``
        checks a remote model's rounds first (None: it assesses every round); a model that
        judges evidence itself (the offline model) is its own judge."""
        self._catalog = catalog
        self._searcher = searcher
        self._model = model
        self._limits = limits
        self._embedder = embedder
        self._endpoints = endpoints
        self._reranks = reranks
        self._judge = judge

    async def _known_datasets(self, dataset_ids: Iterable[str]) -> tuple[str, ...]:
        ids = _distinct_ids(dataset_ids)
        await self._require_known(ids)
        return ids

    async def _require_known(self, ids: tuple[str, ...]) -> None:
        missing = await self._catalog.missing_datasets(list(ids))
        if missing:
            raise NotFound(said("unknown_dataset_s", join_unknown=", ".join(missing)))

    @stream_errors
    async def Retrieve(self, request: pb.RetrieveRequest, context: Context) -> AsyncIterator[pb.RetrieveResponse]:
        question = request.question.strip()
        if not question:
            raise InvalidRequest(said("question_must_not_be_empty"))
        require_question_fits(question)
        settings = convert.search_settings(request.search)
        history = convert.history(list(request.history))
        dataset_ids = _distinct_ids(request.dataset_ids)
        model = await self._aux_model(request.aux_model_id)
        rerank = self._round_reranker(request.rerank_model_id, settings)
        async for event in self._loop(
            model, question, history, settings, dataset_ids, check_datasets=True, rerank=rerank
        ):
            if isinstance(event, LoopResult):
                reply = convert.result(event, settings.mode)
                await self._name_datasets(reply.result.paragraphs)
                yield reply
            else:
                yield convert.progress(event)

    async def _name_datasets(self, paragraphs: Sequence[common_pb2.Paragraph]) -> None:
        """Give each paragraph its dataset's name: what a chat page shows as an answer's source."""
        names = await self._catalog.dataset_names(list({p.dataset_id for p in paragraphs}))
        for found in paragraphs:
            found.dataset_name = names.get(found.dataset_id, "")

    def _round_reranker(self, endpoint_id: str, settings: SearchSettings) -> RoundReranker | None:
        """The rerank step a request asks for; None for none. Whether the endpoint exists and
        answers is found out at each round, where a failure only keeps the search order."""
        endpoint_id = endpoint_id.strip()
        if not endpoint_id or self._reranks is None:
            return None
        return RoundReranker(self._reranks, endpoint_id, settings.top_n)

    @unary_errors
    async def Evaluate(self, request: pb.EvaluateRequest, context: Context) -> pb.EvaluateResponse:
        cases = evaluation.questions(request)
        settings = convert.search_settings(request.search)
        dataset_ids = await self._known_datasets(request.dataset_ids)
        if not dataset_ids:
            raise InvalidRequest(said("dataset_ids_must_name_least_one_2"))
        model = await self._aux_model(request.aux_model_id)
        gate = asyncio.Semaphore(CONCURRENT_CASES)

        async def run(case: pb.EvalCase, asked: evaluation.EvalQuestion) -> pb.CaseScore:
            async with gate:
                outcome = await self._outcome(model, asked.question, asked.history, settings, dataset_ids)
            return evaluation.score(case, asked.gold, outcome)

        # A case that fails (a model endpoint down) fails the evaluation and cancels the rest;
        # its error, not the group's, says why (the caller gets its status code).
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(run(case, asked)) for case, asked in zip(request.cases, cases, strict=True)]
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None
        scores = [task.result() for task in tasks]
        return pb.EvaluateResponse(summary=evaluation.summarize(scores), cases=scores)

    async def _aux_model(self, endpoint_id: str) -> ModelClient:
        """The model a request names for its auxiliary calls; empty is the deployment's (given
        the offline matcher when it is the offline model). An unknown id is NOT_FOUND."""
        endpoint_id = endpoint_id.strip()
        if not endpoint_id or self._endpoints is None:
            return self._model
        return await self._endpoints.client(endpoint_id)

    async def _outcome(
        self,
        model: ModelClient,
        question: str,
        history: list[ChatMessage],
        settings: SearchSettings,
        dataset_ids: tuple[str, ...],
    ) -> LoopResult:
        """The loop's result for one question on datasets already checked (progress dropped)."""
        outcome = None
        async for event in self._loop(model, question, history, settings, dataset_ids, check_datasets=False):
            if isinstance(event, LoopResult):
                outcome = event
        if outcome is None:
            raise RuntimeError("the retrieval loop ended without a result")
        return outcome

    async def _loop(
        self,
        model: ModelClient,
        question: str,
        history: list[ChatMessage],
        settings: SearchSettings,
        dataset_ids: tuple[str, ...],
        check_datasets: bool,
        rerank: RoundReranker | None = None,
    ) -> AsyncIterator[Retrieving | Assessed | LoopResult]:
        """The loop for one question, its auxiliary calls made by ``model``: its progress events, then its result."""
        # Without history the loop's first query is the question itself: search it while the
        # datasets are checked. Nothing is said before the check has passed; if it fails, the
        # early search is dropped.
        if rerank is not None:  # more candidates than are kept, for the reranker to choose from
            settings = candidate_settings(settings)
        first_query = question[:FIRST_QUERY_CHARS] if dataset_ids and not history else None
        early = (
            asyncio.ensure_future(self._searcher.search(dataset_ids, first_query, settings)) if first_query else None
        )
        if early is not None:  # its failure is reported where the loop awaits it, or not at all
            early.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            if check_datasets:
                await self._require_known(dataset_ids)
        except BaseException:
            if early is not None:
                early.cancel()
            raise

        async def search(query: str) -> Any:
            nonlocal early
            if early is not None and query == first_query:
                taken, early = early, None
                return await taken
            return await self._searcher.search(dataset_ids, query, settings)

        judge = model if isinstance(model, EvidenceJudge) else self._judge
        loop = RetrievalLoop(model, search, self._limits, rerank, judge)
        try:
            async for event in loop.run(question, history, bool(dataset_ids)):
                yield event
        finally:
            if early is not None:
                early.cancel()

    @unary_errors
    async def Search(self, request: pb.SearchRequest, context: Context) -> pb.SearchResponse:
        query = request.query.strip()
        if not query:
            raise InvalidRequest(said("query_must_not_be_empty"))
        if len(query) > MAX_SEARCH_QUERY_CHARS:
            raise InvalidRequest(said("query_longer_characters", max_search_query_chars=MAX_SEARCH_QUERY_CHARS))
        settings = convert.search_settings(request.search)
        dataset_ids = await self._known_datasets(request.dataset_ids)
        if not dataset_ids:
            raise InvalidRequest(said("dataset_ids_must_name_least_one"))
        hits = await self._searcher.search(dataset_ids, query, settings)
        reply = pb.SearchResponse(paragraphs=[convert.paragraph(h) for h in hits])
        await self._name_datasets(reply.paragraphs)
        return reply

    @unary_errors
    async def GroupTexts(self, request: pb.GroupTextsRequest, context: Context) -> pb.GroupTextsResponse:
        groups = await group_texts(self._embedder, list(request.texts))
        return pb.GroupTextsResponse(groups=[pb.TextGroup(members=g.members, central=g.central) for g in groups])


def _distinct_ids(dataset_ids: Iterable[str]) -> tuple[str, ...]:
    """Trimmed, blanks dropped, each id once, in the order given."""
    return tuple(dict.fromkeys(d.strip() for d in dataset_ids if d.strip()))
