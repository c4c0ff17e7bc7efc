"""The bounded retrieve → assess → targeted follow-up loop of one question (seed §6).

It stops on the first of: sufficient evidence, the round limit, only repeated queries, no
new evidence after the first round, the evidence budget, no follow-up query, no datasets,
or an assessment that failed. The trace records queries and evidence decisions only.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from kbcore.models.base import ChatMessage, EvidenceParagraph, ModelClient, ModelError
from kbcore.models.question_parts import normalise_query
from kbcore.tokens import count_tokens, token_bound
from services.retrieval.assessment import InvalidAssessment, parse_assessment
from services.retrieval.store.base import Hit

log = logging.getLogger(__name__)

MAX_PARAGRAPHS = 40
FIRST_QUERY_CHARS = 1000
NOT_ASSESSED = "尚未完成充分性评估"
NO_DATASETS = "应用未关联知识库"
ASSESSMENT_FAILED = "证据充分性评估失败，无法确认已覆盖全部问题"


class StopReason(enum.StrEnum):
    SUFFICIENT = "sufficient"
    MAX_ROUNDS = "max_rounds"
    DUPLICATE_QUERY = "duplicate_query"
    NO_NEW_EVIDENCE = "no_new_evidence"
    EVIDENCE_BUDGET = "evidence_budget"
    NO_FOLLOWUP_QUERY = "no_followup_query"
    NO_DATASETS = "no_datasets"
    ASSESSMENT_ERROR = "assessment_error"


SearchFn = Callable[[str], Awaitable[list[Hit]]]


@dataclass(frozen=True)
class LoopLimits:
    max_rounds: int = 3
    evidence_tokens: int = 16000
    max_paragraphs: int = MAX_PARAGRAPHS


@dataclass(frozen=True)
class Retrieving:
    round: int
    query: str


@dataclass(frozen=True)
class Assessed:
    round: int
    sufficient: bool
    missing: str


@dataclass
class RoundTrace:
    round: int
    queries: list[str]
    new_paragraph_ids: list[str]
    total_evidence: int
    sufficient: bool = False
    missing: str = ""
    next_queries: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Evidence:
    hit: Hit
    round: int


@dataclass
class LoopResult:
    problem_text: str
    evidence: list[Evidence]
    rounds: list[RoundTrace]
    stop_reason: StopReason
    sufficient: bool
    missing: str
    run_time: float
    rewrite_error: str = ""


def evidence_json(hit: Hit) -> str:
    """A paragraph as the prompt sends it."""
    return json.dumps(
        {"id": hit.id, "document_name": hit.document_name, "title": hit.title, "content": hit.content},
        ensure_ascii=False,
    )


def evidence_size(hit: Hit) -> int:
    """Tokens a paragraph costs in the prompt, estimated on the JSON it is sent as."""
    return count_tokens(evidence_json(hit))


class TokenBudget:
    """The evidence token budget, deciding exactly as summing ``evidence_size`` would, while
    tokenizing only near the limit: as long as the byte bounds of what was taken fit, the
    exact counts fit too (a text has no more tokens than UTF-8 bytes)."""

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


class RetrievalLoop:
    def __init__(self, model: ModelClient, search: SearchFn, limits: LoopLimits) -> None:
        self._model = model
        self._search = search
        self._limits = limits

    async def run(
        self, question: str, history: Sequence[ChatMessage], has_datasets: bool
    ) -> AsyncIterator[Retrieving | Assessed | LoopResult]:
        started = time.monotonic()
        rounds: list[RoundTrace] = []
        evidence: dict[str, Evidence] = {}
        searched: dict[str, str] = {}  # normalised → as searched
        budget = TokenBudget(self._limits.evidence_tokens)
        stop = StopReason.MAX_ROUNDS
        missing = NOT_ASSESSED
        sufficient = False
        problem_text, rewrite_error = question, ""

        if not has_datasets:
            # No knowledge to search: no rewrite, no assessment, no model call at all.
            stop, missing = StopReason.NO_DATASETS, NO_DATASETS
        else:
            problem_text, rewrite_error = await self._rewrite(history, question)
            queries = [problem_text[:FIRST_QUERY_CHARS]]
            for round_no in range(1, self._limits.max_rounds + 1):
                fresh: list[str] = []
                for query in queries:
                    key = normalise_query(query)
                    if key and key not in searched:
                        searched[key] = query
                        fresh.append(query)
                if not fresh:
                    stop = StopReason.DUPLICATE_QUERY
                    break
                # The (at most two) queries of a round run concurrently, and start before their
                # progress events are sent (each send waits for its completion); merging in query
                # order keeps the evidence order independent of which search finished first.
                searches = [asyncio.ensure_future(self._search(q)) for q in fresh]
                try:
                    for query in fresh:
                        yield Retrieving(round_no, query)
                    results = await asyncio.gather(*searches)
                except BaseException:
                    for search in searches:
                        search.cancel()
                    raise
                added: list[str] = []
                exhausted = False
                for hits in results:
                    for hit in hits:
                        if hit.id in evidence:
                            continue
                        if len(evidence) >= self._limits.max_paragraphs or not budget.take(evidence_json(hit)):
                            exhausted = True
                            continue
                        evidence[hit.id] = Evidence(hit, round_no)
                        added.append(hit.id)
                step = RoundTrace(round_no, fresh, added, len(evidence))
                rounds.append(step)
                try:
                    raw = await self._model.assess(
                        question, history, as_model_evidence(list(evidence.values())), list(searched.values())
                    )
                    decision = parse_assessment(raw)
                except (ModelError, InvalidAssessment) as exc:
                    log.warning("assessment failed in round %d: %s", round_no, exc)
                    stop, missing = StopReason.ASSESSMENT_ERROR, ASSESSMENT_FAILED
                    sufficient = False
                    step.sufficient, step.missing = False, missing
                    break
                sufficient = decision.sufficient and bool(evidence)  # empty evidence is never sufficient
                missing = decision.missing
                queries = list(decision.queries)
                step.sufficient, step.missing, step.next_queries = sufficient, missing, queries
                yield Assessed(round_no, sufficient, missing)
                if sufficient:
                    stop = StopReason.SUFFICIENT
                    break
                if exhausted:
                    stop = StopReason.EVIDENCE_BUDGET
                    break
                if round_no > 1 and not added:
                    stop = StopReason.NO_NEW_EVIDENCE
                    break
                if not queries:
                    stop = StopReason.NO_FOLLOWUP_QUERY
                    break
        yield LoopResult(
            problem_text=problem_text,
            evidence=list(evidence.values()),
            rounds=rounds,
            stop_reason=stop,
            sufficient=sufficient,
            missing=missing,
            run_time=time.monotonic() - started,
            rewrite_error=rewrite_error,
        )

    async def _rewrite(self, history: Sequence[ChatMessage], question: str) -> tuple[str, str]:
        """The standalone question; the original when there is no history or the model fails."""
        if not history:
            return question, ""
        try:
            rewritten = (await self._model.rewrite(history, question)).strip()
        except ModelError as exc:
            log.warning("rewrite failed, searching with the question as asked: %s", exc)
            return question, str(exc)
        return (rewritten or question), ""
