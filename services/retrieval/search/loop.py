"""The bounded retrieve → assess → targeted follow-up loop of one question (docs/retrieval.md).

It stops on the first of: sufficient evidence, the round limit, only repeated queries, no
new evidence after the first round, the evidence budget, no follow-up query, no datasets,
or an assessment that failed. The trace records queries and evidence decisions only.

With an evidence judge, a compound question's parts are searched beside it in the first
round; a round whose evidence the judge finds answering every part is sufficient without an
assessment call; and while the judge has follow-up queries of its own and rounds are left, the
next round searches them without one. The model is asked when the judge can neither verify nor
search further, so it has the last word before the loop gives up: with a real model each call
is seconds the visitor waits before the first answer word (docs/retrieval.md, "How fast the
loop answers").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import kbcore.telemetry.tracing as tracing
from grpc_stubs.common.v1 import common_pb2
from kbcore.models.base import ChatMessage, EvidenceJudge, EvidenceParagraph, ModelClient, ModelError, PartSupport
from kbcore.models.offline.borrowing import supported_reading
from kbcore.models.offline.evidence import prepare
from kbcore.models.offline.question_parts import normalise_query
from kbcore.text.tokens import count_tokens, token_bound
from kbcore.words.said import Said
from services.retrieval.search.assessment import InvalidAssessment, parse_assessment
from services.retrieval.search.rerank_step import RerankedRound
from services.retrieval.store.base import Hit

log = logging.getLogger(__name__)

MAX_PARAGRAPHS = 40
FIRST_QUERY_CHARS = 1000
MAX_FIRST_ROUND_PARTS = 4  # parts searched beside a compound question; more are left to follow-ups
BY_JUDGE = "evidence_judge"  # a round the local evidence judge decided, with no assessment call
NOT_ASSESSED = "尚未完成充分性评估"
NO_DATASETS = "应用未关联知识库"
ASSESSMENT_FAILED = "证据充分性评估失败，无法确认已覆盖全部问题"


SearchFn = Callable[[str], Awaitable[list[Hit]]]
# The round's queries and their hits → the hits to admit, re-ordered by a rerank model.
RerankFn = Callable[[Sequence[str], Sequence[Sequence[Hit]]], Awaitable[RerankedRound]]


@dataclass(frozen=True)
class LoopLimits:
    max_rounds: int = 3
    evidence_tokens: int = 16000
    max_paragraphs: int = MAX_PARAGRAPHS


@dataclass(frozen=True)
class Retrieving:
    """A round starts searching: one event per round, so progress reads one line per round."""

    round: int
    query: str  # the round's first query
    queries: tuple[str, ...] = ()  # every query of the round


@dataclass(frozen=True)
class Assessed:
    """A round's verdict; ``continues`` says whether another round will look for what is
    missing, so progress never says "still looking" when the answer is written next."""

    round: int
    sufficient: bool
    missing: str
    continues: bool = False


@dataclass
class RoundTrace:
    round: int
    queries: list[str]
    new_paragraph_ids: list[str]
    total_evidence: int
    sufficient: bool = False
    missing: str = ""
    next_queries: list[str] = field(default_factory=list)
    reranked: bool = False  # the round's candidates were re-ordered by the rerank model
    rerank_error: str = ""  # why a chosen rerank model did not re-order them (search order kept)
    assessment_skipped: bool = False  # nothing new to judge: the last verdict stands
    assessed_by: str = ""  # BY_JUDGE when the evidence judge decided the round; empty: the model's assessment


@dataclass(frozen=True)
class Evidence:
    hit: Hit
    round: int
    rerank_score: float | None = None  # the rerank model's score, when its round was reranked


@dataclass
class LoopResult:
    problem_text: str
    evidence: list[Evidence]
    rounds: list[RoundTrace]
    stop_reason: common_pb2.StopReason
    sufficient: bool
    missing: str
    run_time: float
    rewrite_error: Said | None = None
    support: list[PartSupport] = field(default_factory=list)  # offline model: which sentences answer which part


def evidence_json(hit: Hit) -> str:
    """A paragraph as the prompt sends it."""
    return json.dumps(
        {"id": hit.id, "document_name": hit.document_name, "title": hit.title, "content": hit.content},
        ensure_ascii=False,
    )


class TokenBudget:
    """The evidence token budget, deciding exactly as summing each paragraph's token count (on
    the JSON it is sent as) would, while tokenizing only near the limit: as long as the byte
    bounds of what was taken fit, the exact counts fit too (a text has no more tokens than
    UTF-8 bytes)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._counted = 0  # exact tokens of the paragraphs counted so far
        self._uncounted: list[str] = []  # taken on their bound, not tokenized yet
        self._bound = 0  # _counted + the bounds of _uncounted

    def take(self, text: str) -> bool:
        """Count ``text`` in when it fits the budget; False (and nothing counted) when it does not."""
        bound = token_bound(text)
        if self._bound + bound <= self._limit:
            self._uncounted.append(text)
            self._bound += bound
            return True
        self._counted += sum(count_tokens(t) for t in self._uncounted)
        self._uncounted.clear()
        size = count_tokens(text)
        if self._counted + size > self._limit:
            self._bound = self._counted
            return False
        self._counted += size
        self._bound = self._counted
        return True


def as_model_evidence(evidence: Sequence[Evidence]) -> list[EvidenceParagraph]:
    return [EvidenceParagraph(e.hit.id, e.hit.document_name, e.hit.title, e.hit.content) for e in evidence]


@dataclass(frozen=True)
class Reading:
    """The standalone question searched and judged (``problem_text``), and what the judge and
    the model are given for it: the question and the history it is read with."""

    problem_text: str
    question: str
    history: Sequence[ChatMessage]


@dataclass
class _Gathered:
    """What the loop has gathered so far: each step adds to it, and ``run`` reports it."""

    budget: TokenBudget
    rounds: list[RoundTrace] = field(default_factory=list)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    searched: dict[str, str] = field(default_factory=dict)  # normalised → as searched
    stop: common_pb2.StopReason = common_pb2.STOP_REASON_MAX_ROUNDS
    sufficient: bool = False
    missing: str = NOT_ASSESSED
    # The question every round is judged as, and the chat it is read with: the rewrite and the
    # history, or, when the first round's evidence says it stands alone, the question (or the
    # part of the rewrite the evidence supports) with no history (``Reading``).
    reading: Reading = field(default_factory=lambda: Reading("", "", ()))

    def fresh(self, queries: Sequence[str], record: bool = True) -> list[str]:
        """The queries never searched before (compared normalised), now recorded as searched
        (``record`` False: only looked up, to know whether a next round would search anything)."""
        fresh: list[str] = []
        seen = dict(self.searched) if not record else self.searched
        for query in queries:
            key = normalise_query(query)
            if key and key not in seen:
                seen[key] = query
                fresh.append(query)
        return fresh

    def merge(
        self,
        round_no: int,
        results: Sequence[Sequence[Hit]],
        max_paragraphs: int,
        rerank_scores: dict[str, float] | None = None,
    ) -> tuple[list[str], bool]:
        """Add the round's new paragraphs, in query order then rank order.

        Returns the ids added, and whether the paragraph limit or the token budget turned any
        paragraph away (the evidence is exhausted then: no later round could add to it)."""
        added: list[str] = []
        exhausted = False
        for hits in results:
            for hit in hits:
                if hit.id in self.evidence:
                    continue
                if len(self.evidence) >= max_paragraphs or not self.budget.take(evidence_json(hit)):
                    exhausted = True
                    continue
                self.evidence[hit.id] = Evidence(hit, round_no, (rerank_scores or {}).get(hit.id))
                added.append(hit.id)
        return added, exhausted


def _stop_after(
    round_no: int, sufficient: bool, exhausted: bool, added: Sequence[str], queries: Sequence[str]
) -> common_pb2.StopReason | None:
    """Why the loop ends after an assessed round, the first that holds in this order; None to go on."""
    if sufficient:
        return common_pb2.STOP_REASON_SUFFICIENT
    if exhausted:
        return common_pb2.STOP_REASON_EVIDENCE_BUDGET
    if round_no > 1 and not added:
        return common_pb2.STOP_REASON_NO_NEW_EVIDENCE
    if not queries:
        return common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY
    return None


def _keep_last_verdict(gathered: _Gathered, step: RoundTrace) -> None:
    """A later round that added no paragraph leaves the evidence as the last assessment judged
    it: asking again would cost a model call (seconds with a real model) to hear the same
    verdict, and the loop stops here either way (no_new_evidence). The trace says so."""
    step.sufficient, step.missing, step.assessment_skipped = gathered.sufficient, gathered.missing, True


def _judge_led(gathered: _Gathered) -> bool:
    """Whether the round before the current one went on by the judge's queries alone: its
    evidence has not been put to the model, which has the last word before the loop gives up."""
    return len(gathered.rounds) > 1 and gathered.rounds[-2].assessed_by == BY_JUDGE and not gathered.sufficient


class RetrievalLoop:
    def __init__(
        self,
        model: ModelClient,
        search: SearchFn,
        limits: LoopLimits,
        rerank: RerankFn | None = None,
        judge: EvidenceJudge | None = None,
    ) -> None:
        """``judge`` checks each round's evidence before the model is asked (None: the model
        assesses every round, and the first round searches the question whole)."""
        self._model = model
        self._search = search
        self._limits = limits
        self._rerank = rerank  # None: the search's order is the admission order
        self._judge = judge
        self._model_is_judge = judge is not None and judge is cast(object, model)  # the offline model

    async def run(
        self, question: str, history: Sequence[ChatMessage], has_datasets: bool
    ) -> AsyncIterator[Retrieving | Assessed | LoopResult]:
        """Progress events of each round, then the LoopResult (always last, whatever stopped the loop)."""
        started = time.monotonic()
        gathered = _Gathered(TokenBudget(self._limits.evidence_tokens))
        rewrite_error: Said | None = None
        gathered.reading = Reading(question, question, history)
        if not has_datasets:
            # No knowledge to search: no rewrite, no assessment, no model call at all.
            gathered.stop, gathered.missing = common_pb2.STOP_REASON_NO_DATASETS, NO_DATASETS
        else:
            problem_text, rewrite_error = await self._rewrite(history, question)
            gathered.reading = Reading(problem_text, question, history)
            # Closed with this generator, so a consumer leaving early cancels the searches at once.
            async with contextlib.aclosing(self._rounds(question, gathered)) as rounds:
                async for event in rounds:
                    yield event
        support = await self._support(gathered)
        yield LoopResult(
            problem_text=gathered.reading.problem_text,
            evidence=list(gathered.evidence.values()),
            rounds=gathered.rounds,
            stop_reason=gathered.stop,
            sufficient=gathered.sufficient,
            missing=gathered.missing,
            run_time=time.monotonic() - started,
            rewrite_error=rewrite_error,
            support=support,
        )

    async def _support(self, gathered: _Gathered) -> list[PartSupport]:
        """The offline model's verdict on the final evidence, for its answer in the chat service
        (which has no embedder); nothing for a remote model, which reads the evidence itself."""
        if not isinstance(self._model, EvidenceJudge) or not gathered.evidence:
            return []
        reading = gathered.reading
        evidence = as_model_evidence(list(gathered.evidence.values()))
        return await self._judged(self._model, reading.question, reading.history, evidence)

    async def _judged(
        self,
        judge: EvidenceJudge,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
    ) -> list[PartSupport]:
        """The judge's verdict per part on the evidence so far; none when it failed (the model
        assesses then, and the offline answer falls back to shared words)."""
        try:
            return await judge.support(question, history, evidence)
        except ModelError as exc:  # the embeddings endpoint failed
            log.warning("evidence support failed: %s", exc)
            return []

    async def _first_queries(self, question: str, history: Sequence[ChatMessage], problem_text: str) -> list[str]:
        """The standalone question, the question as asked when a rewrite lent it words (whether
        it keeps them is decided by what the two find, ``_read``), and beside them each of its
        parts when it has several (the judge splits it): a part's own wording finds its
        paragraph where the whole question's mixed meaning ranks it too low, without waiting an
        assessment for a follow-up query."""
        queries = [problem_text[:FIRST_QUERY_CHARS]]
        if problem_text != question:
            queries.append(question[:FIRST_QUERY_CHARS])
        if self._judge is None:
            return queries
        try:
            parts = await self._judge.part_queries(question, history)
        except ModelError as exc:
            log.warning("splitting the question failed, searching it whole: %s", exc)
            return queries
        return queries + [p[:FIRST_QUERY_CHARS] for p in parts[:MAX_FIRST_ROUND_PARTS]] if len(parts) > 1 else queries

    async def _read(self, gathered: _Gathered) -> None:
        """After the first round, the standalone question its evidence supports: a rewrite keeps
        the words it lent the question only where the evidence says the question needs them
        (``kbcore.models.offline.borrowing``); the same rule for every model, with the judge's
        view of what answers the question as asked when there is a judge."""
        reading = gathered.reading
        if reading.problem_text == reading.question:
            return
        evidence = as_model_evidence(list(gathered.evidence.values()))
        try:
            if self._judge is not None:
                chosen = await self._judge.reading(reading.question, reading.problem_text, evidence)
            else:
                chosen = await asyncio.to_thread(
                    supported_reading, reading.question, reading.problem_text, prepare(evidence)
                )
        except ModelError as exc:
            log.warning("judging the rewrite by its evidence failed, keeping it: %s", exc)
            return
        if chosen != reading.problem_text:
            gathered.reading = Reading(chosen, chosen, ())

    async def _decided_by_judge(
        self, question: str, history: Sequence[ChatMessage], gathered: _Gathered, step: RoundTrace, last: bool
    ) -> bool:
        """Whether the judge decides the round without an assessment call (the trace says
        ``assessed_by``): it verifies every part (sufficient), or, when it does not, it has
        follow-up queries never searched and the loop goes on (``last``: no round or budget left
        for them). Otherwise the model is asked."""
        if self._judge is None or not gathered.evidence:
            return False
        evidence = as_model_evidence(list(gathered.evidence.values()))
        support = await self._judged(self._judge, question, history, evidence)
        if support and all(part.verified and part.quotes for part in support):
            gathered.sufficient, gathered.missing = True, ""
            step.sufficient, step.missing, step.assessed_by = True, "", BY_JUDGE
            return True
        if self._model_is_judge or last:
            return False  # the same decision either way / the model has the last word
        try:
            decision = parse_assessment(
                await self._judge.verdict(question, history, evidence, list(gathered.searched.values()))
            )
        except (ModelError, InvalidAssessment) as exc:
            log.warning("the evidence judge proposed nothing, asking the model: %s", exc)
            return False
        queries = [q for q in decision.queries if normalise_query(q) not in gathered.searched]
        if not queries:
            return False
        gathered.sufficient, gathered.missing = False, decision.missing
        step.sufficient, step.missing, step.next_queries, step.assessed_by = False, decision.missing, queries, BY_JUDGE
        return True

    async def _rounds(self, asked: str, gathered: _Gathered) -> AsyncGenerator[Retrieving | Assessed, None]:
        """Search, then assess, round after round until a stop reason holds (``gathered.stop``).

        The first round searches the standalone question (the question as asked beside a
        rewrite, and its parts), and its evidence settles which reading the rounds judge; later
        ones search the assessment's follow-up queries."""
        first = gathered.reading
        queries = await self._first_queries(asked, first.history, first.problem_text)
        for round_no in range(1, self._limits.max_rounds + 1):
            fresh = gathered.fresh(queries)
            if not fresh:
                gathered.stop = common_pb2.STOP_REASON_DUPLICATE_QUERY
                return
            # One span per round, current only while it awaits (never across a yield).
            round_span = tracing.start_span("retrieval round", {"kb.round": round_no, "kb.queries": len(fresh)})
            try:
                # The queries of a round run concurrently, and start before their
                # progress events are sent (each send waits for its completion); merging in query
                # order keeps the evidence order independent of which search finished first.
                with tracing.current(round_span):
                    searches = [asyncio.ensure_future(self._search(q)) for q in fresh]
                try:
                    yield Retrieving(round_no, fresh[0], tuple(fresh))
                    results = await asyncio.gather(*searches)
                except BaseException:
                    for search in searches:
                        search.cancel()
                    raise
                with tracing.current(round_span):
                    step, exhausted = await self._merge_round(round_no, fresh, results, gathered)
                    if round_no == 1:
                        await self._read(gathered)
                    question, history = gathered.reading.question, gathered.reading.history
                    round_span.set_attribute("kb.hits", sum(len(hits) for hits in results))
                    round_span.set_attribute("kb.new_paragraphs", len(step.new_paragraph_ids))
                    next_queries: list[str] | None = []
                    if round_no > 1 and not step.new_paragraph_ids and not _judge_led(gathered):
                        _keep_last_verdict(gathered, step)
                    elif await self._decided_by_judge(
                        question, history, gathered, step, exhausted or round_no >= self._limits.max_rounds
                    ):
                        next_queries = step.next_queries
                    else:
                        next_queries = await self._assess(question, history, gathered, step)
            finally:
                round_span.end()
            if next_queries is None:
                return
            queries = next_queries
            stop = _stop_after(round_no, gathered.sufficient, exhausted, step.new_paragraph_ids, queries)
            if stop is None and round_no >= self._limits.max_rounds:
                stop = common_pb2.STOP_REASON_MAX_ROUNDS
            if stop is None and not gathered.fresh(queries, record=False):
                stop = common_pb2.STOP_REASON_DUPLICATE_QUERY
            if not step.assessment_skipped:
                yield Assessed(round_no, gathered.sufficient, gathered.missing, continues=stop is None)
            if stop is not None:
                gathered.stop = stop
                return

    async def _merge_round(
        self, round_no: int, fresh: list[str], results: Sequence[Sequence[Hit]], gathered: _Gathered
    ) -> tuple[RoundTrace, bool]:
        """The round's hits (re-ordered by the rerank model when one is chosen) into the
        evidence: the round's trace, and whether the evidence limits turned any away."""
        reranked = await self._rerank(fresh, results) if self._rerank is not None else None
        if reranked is not None:
            results = reranked.results
        scores = reranked.scores if reranked is not None else None
        added, exhausted = gathered.merge(round_no, results, self._limits.max_paragraphs, scores)
        step = RoundTrace(round_no, fresh, added, len(gathered.evidence))
        if reranked is not None:
            step.reranked, step.rerank_error = not reranked.error, reranked.error
        gathered.rounds.append(step)
        return step, exhausted

    async def _assess(
        self, question: str, history: Sequence[ChatMessage], gathered: _Gathered, step: RoundTrace
    ) -> list[str] | None:
        """Ask the model whether the evidence so far answers the question, recording its verdict.

        Returns the follow-up queries it proposes; None when the assessment failed, which stops
        the loop: an answer must not claim to cover what nobody checked."""
        try:
            raw = await self._model.assess(
                question, history, as_model_evidence(list(gathered.evidence.values())), list(gathered.searched.values())
            )
            decision = parse_assessment(raw)
        except (ModelError, InvalidAssessment) as exc:
            log.warning("assessment failed in round %d: %s", step.round, exc)
            gathered.stop, gathered.missing = common_pb2.STOP_REASON_ASSESSMENT_ERROR, ASSESSMENT_FAILED
            gathered.sufficient = False
            step.sufficient, step.missing = False, gathered.missing
            return None
        gathered.sufficient = decision.sufficient and bool(gathered.evidence)  # empty evidence is never sufficient
        gathered.missing = decision.missing
        queries = list(decision.queries)
        step.sufficient, step.missing, step.next_queries = gathered.sufficient, gathered.missing, queries
        return queries

    async def _rewrite(self, history: Sequence[ChatMessage], question: str) -> tuple[str, Said | None]:
        """The standalone question; the original when there is no history or the model fails."""
        if not history:
            return question, None
        try:
            rewritten = (await self._model.rewrite(history, question)).strip()
        except ModelError as exc:
            log.warning("rewrite failed, searching with the question as asked: %s", exc)
            return question, exc.words
        return (rewritten or question), None
