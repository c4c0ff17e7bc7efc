"""The model used when no endpoint is configured: extractive, deterministic, no network.

It does the four model jobs with term matching instead of language understanding, so a fresh
install answers questions from its knowledge base out of the box — and labels every answer as
extracted, so nobody mistakes it for a language model. Quotes are verbatim sentences with their
document names; parts of a question the evidence does not support are named, never guessed.
CPU work runs in a worker thread so a service's event loop keeps serving other calls.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence

from kbcore.metrics.catalog import ModelCall, Purpose, stream_outcome
from kbcore.models.base import (
    ChatMessage,
    EvidenceMatcher,
    EvidenceParagraph,
    GenerationRequest,
    GenerationStream,
    HistoryTurn,
    PartSupport,
    Usage,
)
from kbcore.models.offline.answer_text import answer_pieces, summary_lines
from kbcore.models.offline.answering import unplaced_things
from kbcore.models.offline.borrowing import supported_reading
from kbcore.models.offline.evidence import Need, Passage, need, prepare, sentences
from kbcore.models.offline.followup import query_by_example
from kbcore.models.offline.question_parts import normalise_query, split_question
from kbcore.models.offline.rewrite import lent_context, standalone_question, with_subject_of
from kbcore.models.offline.support import judge_parts
from kbcore.models.offline.terms import has_names, leading_name, subject_terms, surface, terms_of
from kbcore.models.prompts import SUMMARY_ANSWER, SUMMARY_QUESTION
from kbcore.models.usage_estimate import estimate_usage

log = logging.getLogger(__name__)

OFFLINE_MODEL_NAME = "offline-extractive"

_MISSING_LIMIT = 400
_GIST_CHARS = 120
_REWRITE_TERMS = 5
_ELLIPTICAL_TERMS = 3  # a part with fewer content words borrows the first part's subject
_TRAILING_PUNCTUATION = "？?。！!；;，, "
_REMEMBERED_JUDGEMENTS = 64  # questions judged at once across the service's concurrent chats

JudgementKey = tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]


class OfflineExtractiveModel:
    """The ModelClient of last resort: real answers from the evidence, clearly marked as extracted."""

    model_name = OFFLINE_MODEL_NAME
    is_offline = True

    def __init__(self, matcher: EvidenceMatcher | None = None) -> None:
        """``matcher`` (the retrieval service's embedder) lets parts match paraphrased evidence;
        without it, as in the chat service, support comes with the request or by shared words."""
        self._matcher = matcher
        # The loop asks for a round's judgement, then (when a part is unverified) for the
        # assessment built on the same judgement: it is made once.
        self._judged: OrderedDict[JudgementKey, list[PartSupport]] = OrderedDict()

    async def support(
        self, question: str, history: Sequence[ChatMessage], evidence: Sequence[EvidenceParagraph]
    ) -> list[PartSupport]:
        """Per part of the standalone question, the evidence sentences that answer it."""
        key = (
            question,
            tuple((m.role, m.content) for m in history),
            tuple((p.id, p.content) for p in evidence),
        )
        judged = self._judged.get(key)
        if judged is None:
            judged = await self._judge(question, history, evidence)
            self._judged[key] = judged
            while len(self._judged) > _REMEMBERED_JUDGEMENTS:
                self._judged.popitem(last=False)
        return list(judged)

    async def part_queries(self, question: str, history: Sequence[ChatMessage]) -> list[str]:
        """Each part of the standalone question in the user's words, as the judgement compares it."""
        _, _, queries = await asyncio.to_thread(_parts_of, question, history)
        return queries

    async def reading(self, question: str, rewrite: str, evidence: Sequence[EvidenceParagraph]) -> str:
        """The reading the evidence supports (``borrowing``), counting as the question's own
        evidence the paragraphs this judge finds answering it as asked."""
        supports = await self.support(question, [], evidence)
        answered = {q.paragraph_id for s in supports if s.verified for q in s.quotes}
        nearest = {s.quotes[0].paragraph_id for s in supports if s.quotes}
        return await asyncio.to_thread(supported_reading, question, rewrite, prepare(evidence), answered, nearest)

    async def _judge(
        self, question: str, history: Sequence[ChatMessage], evidence: Sequence[EvidenceParagraph]
    ) -> list[PartSupport]:
        parts, needs, queries = await asyncio.to_thread(_parts_of, question, history)
        passages = prepare(evidence)
        cosines = None
        affinity: dict[tuple[str, str], float] | None = None
        if self._matcher is not None and evidence:
            try:
                cosines = await self._matcher.similarities(queries, evidence)
            except Exception as exc:
                log.warning("evidence matching by meaning failed, matching words only: %s", exc)
            try:
                affinity = await self._affinity(queries, passages) if cosines is not None else None
            except Exception as exc:
                log.warning("matching asked things to documents failed, matching their characters: %s", exc)
        return await asyncio.to_thread(judge_parts, parts, needs, passages, cosines, queries, affinity)

    async def _affinity(self, queries: Sequence[str], passages: Sequence[Passage]) -> dict[tuple[str, str], float]:
        """How near each thing the parts ask about in words no evidence uses is to each document."""
        assert self._matcher is not None
        things = await asyncio.to_thread(unplaced_things, queries, passages)
        names = list(dict.fromkeys(p.paragraph.document_name for p in passages))
        rows = await self._matcher.affinities(things, names)
        return {
            (thing, name): cosine
            for thing, row in zip(things, rows, strict=True)
            for name, cosine in zip(names, row, strict=True)
        }

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        with ModelCall(OFFLINE_MODEL_NAME, Purpose.AUXILIARY):
            return await asyncio.to_thread(standalone_question, history, question)

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        with ModelCall(OFFLINE_MODEL_NAME, Purpose.AUXILIARY):
            return await self.verdict(question, history, evidence, searched)

    async def verdict(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        """The assessment JSON on the judgement of the evidence (``support``, made once)."""
        supports = await self.support(question, history, evidence)
        return await asyncio.to_thread(assessment_json, question, history, evidence, supports, searched)

    async def summarize(self, previous_summary: str, turns: Sequence[HistoryTurn]) -> str:
        return summarize_turns(previous_summary, turns)

    def generate(self, request: GenerationRequest) -> GenerationStream:
        usage = Usage()
        return GenerationStream(deltas=self._stream(request, usage), usage=usage)

    async def _stream(self, request: GenerationRequest, usage: Usage) -> AsyncIterator[str]:
        call = ModelCall(OFFLINE_MODEL_NAME, Purpose.CHAT)  # observed once, when the stream ends
        pieces: list[str] | None = None  # None: composing failed
        sent: list[str] = []
        try:
            pieces = await asyncio.to_thread(compose_answer, request)
            for piece in pieces:
                sent.append(piece)
                yield piece
                await asyncio.sleep(0)  # a stop between chunks takes effect at once
        finally:
            estimate = estimate_usage(request.messages, "".join(sent))
            usage.prompt_tokens, usage.completion_tokens = estimate.prompt_tokens, estimate.completion_tokens
            call.tokens(estimate.prompt_tokens, estimate.completion_tokens)
            call.end(stream_outcome(pieces is not None and len(sent) == len(pieces)))

    async def aclose(self) -> None:
        return None


# --- assess --------------------------------------------------------------------------------


def _in_context(part: str, first: str) -> str:
    """A part too short to stand alone ("增幅是多少？") borrows the first part's subject; one
    that is only a new subject ("青禾乡那边呢？") is the first part asked of that subject."""
    if part == first or len(terms_of(part)) >= _ELLIPTICAL_TERMS:
        return part
    if has_names(part):
        return with_subject_of(first, part)
    added = subject_terms(first, part, limit=_REWRITE_TERMS)
    return f"{' '.join(added)}：{part}" if added else part


def _need(part: str, first: str, asked: str, context: str = "") -> Need:
    """What ``part`` asks for; words of ``context`` (an earlier question) count as borrowed."""
    return need(f"{context}\n{_in_context(part, first)}".strip(), part=part, asked=asked)


def _query(part: str, first: str) -> str:
    """A standalone search query for ``part``: the question's leading subject is added when missing."""
    if part == first:
        return part
    if len(terms_of(part)) < _ELLIPTICAL_TERMS:
        return _in_context(part, first)
    if has_names(part):
        return part
    subject = leading_name(first)
    return f"{subject} {part}" if subject else part


def _bare(part: str) -> str:
    return part.rstrip(_TRAILING_PUNCTUATION)


def _parts_of(question: str, history: Sequence[ChatMessage]) -> tuple[list[str], list[Need], list[str]]:
    """The standalone question's parts, what each asks for, and each as a standalone query."""
    problem = standalone_question(history, question)
    parts = split_question(problem)
    context = lent_context(history, question)
    needs = [_need(p, parts[0], question, context) for p in parts]
    return parts, needs, [_matching_query(_query(p, parts[0]), problem, question) for p in parts]


def _matching_query(query: str, problem: str, question: str) -> str:
    """A part in the user's words, with the topic a rewrite lent it shrunk to its key words:
    what the part is compared with by meaning, so the earlier answer does not outscore this
    one, and its follow-up search after the first round searched the whole rewrite."""
    lent = problem[: problem.find(question)] if problem != question and question in problem else ""
    if not lent or not query.startswith(lent):
        return query
    own = query[len(lent) :]
    subject = subject_terms(lent, own, limit=_REWRITE_TERMS) or [leading_name(lent)]
    return f"{' '.join(subject)} {own}".strip()


def _words_query(query: str) -> str:
    """The query's content words alone ("年假有几天？" → "年假"): the last way of looking for a
    part before its absence is concluded, once every wording of it was searched. Without the
    asking words, the search weighs what the part is about, not how it asks."""
    return " ".join(surface(t.text, query) for t in terms_of(query))


def assessment_json(
    question: str,
    history: Sequence[ChatMessage],
    evidence: Sequence[EvidenceParagraph],
    supports: Sequence[PartSupport],
    searched: Sequence[str],
) -> str:
    """The assessment JSON: sufficient only when every part of the question has a supporting sentence."""
    problem = standalone_question(history, question)
    parts = [s.part for s in supports] or split_question(problem)
    uncovered = [s.part for s in supports if not s.verified] if supports else parts
    sufficient = bool(evidence) and not uncovered
    if sufficient:
        return json.dumps({"sufficient": True, "missing": "", "queries": []}, ensure_ascii=False)
    if not evidence:
        missing = "未检索到相关资料，缺少问题全部部分的资料"
    else:
        missing = "缺少" + "、".join(f"“{_bare(p)}”" for p in uncovered) + "的资料"
    done = {normalise_query(s) for s in searched}
    queries: list[str] = []
    for part in uncovered:
        example = query_by_example(part, supports, evidence)
        # The part as the user typed it (with its subject's name) before the part with the topic
        # a rewrite lent it: the first round already searched the latter, in the whole question.
        query = _query(part, parts[0])
        for candidate in (example, _matching_query(query, problem, question), query, _words_query(query)):
            key = normalise_query(candidate)
            if key and key not in done:
                done.add(key)
                queries.append(candidate)
                break
        if len(queries) == 2:
            break
    return json.dumps(
        {"sufficient": False, "missing": missing[:_MISSING_LIMIT], "queries": queries}, ensure_ascii=False
    )


# --- summarize -----------------------------------------------------------------------------


def _gist(answer: str) -> str:
    """The answer's first sentences, up to about 120 characters, without the notice, part
    headers or quote marks."""
    lines = summary_lines(answer)
    gist = ""
    for sentence in sentences(" ".join(" ".join(lines).split())):
        if gist and len(gist) + len(sentence) > _GIST_CHARS:
            break
        gist += sentence
    return gist if len(gist) <= _GIST_CHARS else gist[: _GIST_CHARS - 1] + "…"


def summarize_turns(previous_summary: str, turns: Sequence[HistoryTurn]) -> str:
    """Previous summary lines, then one "问：…｜答：…" line per turn; every question is kept whole."""
    lines = [line.strip() for line in previous_summary.splitlines() if line.strip()]
    for turn in turns:
        question = " ".join(turn.question.split())
        line = f"{SUMMARY_QUESTION}{question}{SUMMARY_ANSWER}{_gist(turn.answer) or '（无回答）'}"
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)


# --- generate ------------------------------------------------------------------------------


def _lexical_support(question: str, request: GenerationRequest) -> list[PartSupport]:
    """Support by shared words, for a request that carries none (no retrieval service judged it)."""
    parts = split_question(question)
    needs = [_need(p, parts[0], request.question) for p in parts]
    return judge_parts(parts, needs, prepare(request.evidence))


def compose_answer(request: GenerationRequest) -> list[str]:
    """The answer as stream chunks, from the support the request carries (or shared words)."""
    question = request.problem_text.strip() or request.question
    supports = list(request.support) or (_lexical_support(question, request) if request.evidence else [])
    return answer_pieces(question, bool(request.evidence), supports)
