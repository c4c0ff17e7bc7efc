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
import re
from collections.abc import AsyncIterator, Sequence

from kbcore.models.base import (
    ChatMessage,
    EvidenceParagraph,
    GenerationRequest,
    GenerationStream,
    HistoryTurn,
    Usage,
)
from kbcore.models.offline_evidence import Need, Passage, best_quotes, is_covered, need, prepare, sentences
from kbcore.models.offline_terms import has_names, leading_name, subject_terms, terms_of
from kbcore.models.prompts import SUMMARY_ANSWER, SUMMARY_MARKER, SUMMARY_QUESTION
from kbcore.models.question_parts import normalise_query, split_question
from kbcore.models.usage import estimate_usage

OFFLINE_MODEL_NAME = "offline-extractive"
OFFLINE_LABEL = "（离线抽取式模型：未配置大模型，以下内容直接摘自检索资料）"

_MISSING_LIMIT = 400
_GIST_CHARS = 120
_REWRITE_TERMS = 5
_FOLLOWUP_DEPTH = 3  # how many earlier questions may lend a subject to an elliptical follow-up
_ELLIPTICAL_TERMS = 3  # a part with fewer content words borrows the first part's subject
_TRAILING_PUNCTUATION = "？?。！!；;，, "
_PART_HEADER = re.compile(r"^\d+\. ")  # "1. 青禾乡…？": repeats the question, says nothing new


class OfflineExtractiveModel:
    """The ModelClient of last resort: real answers from the evidence, clearly marked as extracted."""

    model_name = OFFLINE_MODEL_NAME
    is_offline = True

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        return await asyncio.to_thread(standalone_question, history, question)

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        return await asyncio.to_thread(assess_evidence, question, history, evidence, searched)

    async def summarize(self, previous_summary: str, turns: Sequence[HistoryTurn]) -> str:
        return summarize_turns(previous_summary, turns)

    def generate(self, request: GenerationRequest) -> GenerationStream:
        usage = Usage()
        return GenerationStream(deltas=self._stream(request, usage), usage=usage)

    async def _stream(self, request: GenerationRequest, usage: Usage) -> AsyncIterator[str]:
        pieces = await asyncio.to_thread(compose_answer, request)
        sent: list[str] = []
        try:
            for piece in pieces:
                sent.append(piece)
                yield piece
                await asyncio.sleep(0)  # a stop between chunks takes effect at once
        finally:
            estimate = estimate_usage(request.messages, "".join(sent))
            usage.prompt_tokens, usage.completion_tokens = estimate.prompt_tokens, estimate.completion_tokens

    async def aclose(self) -> None:
        return None


# --- rewrite -------------------------------------------------------------------------------


def _earlier_questions(history: Sequence[ChatMessage]) -> list[str]:
    """The user's earlier questions, newest first; a compacted summary contributes its 问： lines."""
    questions: list[str] = []
    summary_questions: list[str] = []
    for message in history:
        if message.role != "user":
            continue
        if message.content.startswith(SUMMARY_MARKER):
            summary_questions.extend(_summary_questions(message.content))
        else:
            questions.append(message.content)
    return list(reversed(summary_questions + questions))


def _summary_questions(summary: str) -> list[str]:
    found: list[str] = []
    for line in summary.splitlines():
        line = line.strip()
        if line.startswith(SUMMARY_QUESTION):
            found.append(line[len(SUMMARY_QUESTION) :].split(SUMMARY_ANSWER, 1)[0].strip())
    return [q for q in found if q]


def standalone_question(history: Sequence[ChatMessage], question: str) -> str:
    """``question`` with the subject it leaves out taken from the questions before it.

    Names in the current question mean the user switched subject, so only the earlier topic
    words are added then; without history the question is already standalone.
    """
    earlier = _earlier_questions(history)[:_FOLLOWUP_DEPTH]
    if not earlier:
        return question
    sources: list[str] = []
    for previous in earlier:
        sources.insert(0, previous)
        if has_names(previous):
            break
    added = subject_terms("\n".join(sources), question, limit=_REWRITE_TERMS, skip_names=has_names(question))
    return f"{' '.join(added)}：{question}" if added else question


# --- assess --------------------------------------------------------------------------------


def _in_context(part: str, first: str) -> str:
    """A part too short to stand alone ("增幅是多少？") borrows the first part's subject."""
    if part == first or has_names(part) or len(terms_of(part)) >= _ELLIPTICAL_TERMS:
        return part
    added = subject_terms(first, part, limit=_REWRITE_TERMS)
    return f"{' '.join(added)}：{part}" if added else part


def _need(part: str, first: str, asked: str) -> Need:
    return need(_in_context(part, first), part=part, asked=asked)


def _query(part: str, first: str) -> str:
    """A standalone search query for ``part``: the question's leading subject is added when missing."""
    if part == first or has_names(part):
        return part
    if len(terms_of(part)) < _ELLIPTICAL_TERMS:
        return _in_context(part, first)
    subject = leading_name(first)
    return f"{subject} {part}" if subject else part


def _bare(part: str) -> str:
    return part.rstrip(_TRAILING_PUNCTUATION)


def assess_evidence(
    question: str,
    history: Sequence[ChatMessage],
    evidence: Sequence[EvidenceParagraph],
    searched: Sequence[str],
) -> str:
    """The assessment JSON: sufficient only when every part of the question has a covering paragraph."""
    parts = split_question(standalone_question(history, question))
    passages = prepare(evidence)
    uncovered = [p for p in parts if not is_covered(_need(p, parts[0], question), passages)]
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
        for candidate in (_query(part, parts[0]), part):
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
    """The answer's first sentences, up to about 120 characters, without the offline label or part headers."""
    lines = [
        line.strip()
        for line in answer.splitlines()
        if line.strip() and not line.startswith(OFFLINE_LABEL) and not _PART_HEADER.match(line)
    ]
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


def _answer_part(wanted: Need, passages: Sequence[Passage], quoted: dict[str, int], index: int) -> list[str]:
    """Quotes for part ``index``; a sentence already quoted for an earlier part is pointed to, not repeated."""
    if not is_covered(wanted, passages):
        return []
    pieces: list[str] = []
    for quote in best_quotes(wanted, passages):
        if quote.sentence in quoted:
            pieces.append(f"见第{quoted[quote.sentence]}部分所引资料【{quote.document_name}】。")
            continue
        quoted[quote.sentence] = index
        pieces.append(f"{quote.sentence}【{quote.document_name}】")
    return pieces


def compose_answer(request: GenerationRequest) -> list[str]:
    """The answer as stream chunks: the label, quoted sentences per part, then what stays unverified."""
    question = request.problem_text.strip() or request.question
    pieces = [OFFLINE_LABEL + "\n\n"]
    if not request.evidence:
        pieces.append("未检索到与问题相关的资料，无法根据知识库回答：" + question)
        return pieces
    parts = split_question(question)
    passages = prepare(request.evidence)
    quoted: dict[str, int] = {}
    unverified: list[str] = []
    for index, part in enumerate(parts, start=1):
        quotes = _answer_part(_need(part, parts[0], request.question), passages, quoted, index)
        if not quotes:
            unverified.append(_bare(part))
            continue
        if len(parts) > 1:
            pieces.append(f"{index}. {part}\n")
        pieces.extend(quotes)
        pieces.append("\n\n")
    if unverified:
        pieces.append(
            "以下部分无法根据资料核实：" + "；".join(unverified) + "。检索到的资料中没有相关内容，本回答不作推测。"
        )
    return _strip_trailing_break(pieces)


def _strip_trailing_break(pieces: list[str]) -> list[str]:
    while pieces and pieces[-1] == "\n\n":
        pieces.pop()
    return pieces
