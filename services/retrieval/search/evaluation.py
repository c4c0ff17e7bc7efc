"""Scoring the retrieval loop against questions with gold snippets, round by round.

One run of the loop is enough to compare one round with the whole loop: every paragraph in the
result carries the round that found it, so the evidence after round ``r`` is the paragraphs
with ``round <= r``. A question the loop stopped early keeps its final evidence for the later
rounds, exactly as a user would have seen it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_QUESTION_TOKENS
from kbcore.models.base import ChatMessage
from kbcore.text.tokens import fits_tokens
from kbcore.words.said import Said, listed, said
from services.retrieval.search.loop import LoopResult

MAX_CASES = 500
MAX_TURNS = 20
PROBLEMS_SHOWN = 5  # a file with many bad lines names the first few, not all of them
NO_ANSWER = "（回答略）"


@dataclass(frozen=True)
class EvalQuestion:
    """A case ready to run: what the loop is asked, with which history, looking for what."""

    question: str
    history: list[ChatMessage]
    gold: list[str]


def questions(request: pb.EvaluateRequest) -> list[EvalQuestion]:
    """Every case, checked; ``InvalidRequest`` naming the first few that cannot be scored."""
    if not request.cases:
        raise InvalidRequest(said("cases_must_hold_least_one_question"))
    if len(request.cases) > MAX_CASES:
        raise InvalidRequest(
            said("most_cases_per_evaluation_got", max_cases=MAX_CASES, len_request_cases=len(request.cases))
        )
    problems = [p for i, case in enumerate(request.cases) if (p := case_problem(case, i))]
    if problems:
        raise InvalidRequest(listed(problems[:PROBLEMS_SHOWN]))
    return [
        EvalQuestion(
            question=case.turns[-1].question.strip(),
            history=[] if request.without_history else history_of(case),
            gold=[g.must_contain for g in case.turns[-1].gold],
        )
        for case in request.cases
    ]


def case_problem(case: pb.EvalCase, index: int) -> Said | None:
    """Why a case cannot be scored, or None when it can."""
    name = str(case.id or index + 1)
    if not case.turns:
        return said("case_has_no_turns", case_id_or_index_1=name)
    if len(case.turns) > MAX_TURNS:
        return said("case_more_turns", case_id_or_index_1=name, max_turns=MAX_TURNS)
    last = case.turns[-1]
    question = last.question.strip()
    if not question:
        return said("case_last_question_empty", case_id_or_index_1=name)
    if not fits_tokens(question, MAX_QUESTION_TOKENS):
        tokens = MAX_QUESTION_TOKENS
        return said("case_last_question_longer_estimated_tokens", case_id_or_index_1=name, max_question_tokens=tokens)
    if not last.gold:
        return said("case_last_turn_has_no_gold", case_id_or_index_1=name)
    if any(not g.must_contain for g in last.gold):
        return said("case_gold_snippet_empty_would_match", case_id_or_index_1=name)
    return None


def history_of(case: pb.EvalCase) -> list[ChatMessage]:
    """Earlier turns as the chat would have them: the question, and an answer made of the
    facts a correct answer contains (the eval set has no model answers)."""
    messages = []
    for turn in case.turns[:-1]:
        messages.append(ChatMessage("user", turn.question))
        messages.append(ChatMessage("assistant", "；".join(turn.answer_facts) or NO_ANSWER))
    return messages


def score(case: pb.EvalCase, gold: Sequence[str], outcome: LoopResult) -> pb.CaseScore:
    """How many gold snippets the evidence held after each round the loop ran."""
    rounds = max([len(outcome.rounds), *(e.round for e in outcome.evidence)], default=0)
    found = []
    for round_number in range(1, rounds + 1):
        evidence = [e.hit.content for e in outcome.evidence if e.round <= round_number]
        found.append(sum(any(snippet in text for text in evidence) for snippet in gold))
    return pb.CaseScore(
        id=case.id,
        kind=case.kind,
        question=case.turns[-1].question,
        problem_text=outcome.problem_text,
        gold_total=len(gold),
        found_by_round=found,
        rounds_used=len(found),
        stop_reason=outcome.stop_reason,
    )


def found_after(score: pb.CaseScore, round_number: int) -> int:
    """Found after ``round_number`` rounds; a loop that stopped earlier keeps its last count."""
    found = score.found_by_round
    return found[min(round_number, len(found)) - 1] if found else 0


def summarize(scores: Sequence[pb.CaseScore]) -> pb.EvalSummary:
    """Recall (share of gold snippets found) and all-gold cases after each round, with how many
    rounds the cases used and why their loops stopped."""
    rounds = max((s.rounds_used for s in scores), default=0)
    gold = sum(s.gold_total for s in scores)
    by_round = []
    for round_number in range(1, rounds + 1):
        found = sum(found_after(s, round_number) for s in scores)
        complete = sum(found_after(s, round_number) == s.gold_total for s in scores)
        by_round.append(pb.RoundRecall(round=round_number, recall=found / gold if gold else 0.0, all_gold=complete))
    used = sorted(Counter(s.rounds_used for s in scores).items())
    reasons = Counter(s.stop_reason for s in scores).most_common()
    return pb.EvalSummary(
        cases=len(scores),
        gold_total=gold,
        by_round=by_round,
        rounds_used=[pb.RoundsUsedCount(rounds=r, cases=n) for r, n in used],
        stop_reasons=[pb.StopReasonCount(stop_reason=r, cases=n) for r, n in reasons],
    )
