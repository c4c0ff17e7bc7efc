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
from typing import Any

from pydantic import BaseModel, Field

from kb.common.v1 import common_pb2
from kb.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.rpc import STOP_REASON_NAMES

MAX_CASES = 500


class GoldIn(BaseModel):
    must_contain: str = Field(min_length=1, max_length=1000)
    doc: str = Field(default="", max_length=500)


class TurnIn(BaseModel):
    question: str = Field(min_length=1, max_length=20_000)
    gold: list[GoldIn] = Field(default_factory=list, max_length=100)
    answer_facts: list[str] = Field(default_factory=list, max_length=100)


class CaseIn(BaseModel):
    """The shipped questions.jsonl shape; fields the scoring does not use are ignored."""

    id: str = Field(default="", max_length=200)
    kind: str = Field(default="", max_length=100)
    turns: list[TurnIn] = Field(min_length=1, max_length=20)


class EvalIn(BaseModel):
    cases: list[CaseIn] = Field(min_length=1, max_length=MAX_CASES)
    # False asks the last turn alone, without the earlier turns as history: the follow-up is
    # then searched as typed, which is what rewriting is measured against.
    rewrite: bool = True


def case_problem(case: CaseIn, index: int) -> str:
    """Why a case cannot be scored, or "" when it can."""
    if not case.turns[-1].gold:
        return f"case {case.id or index + 1}: its last turn has no gold snippets to look for"
    return ""


def history_of(case: CaseIn, rewrite: bool) -> list[common_pb2.Message]:
    """Earlier turns as the chat would have them: the question, and an answer made of the
    facts a correct answer contains (the eval set has no model answers)."""
    if not rewrite:
        return []
    messages = []
    for turn in case.turns[:-1]:
        answer = "；".join(turn.answer_facts) or "（回答略）"
        messages.append(common_pb2.Message(role=common_pb2.ROLE_USER, content=turn.question))
        messages.append(common_pb2.Message(role=common_pb2.ROLE_ASSISTANT, content=answer))
    return messages


@dataclass(frozen=True)
class CaseScore:
    id: str
    kind: str
    question: str
    problem_text: str
    gold_total: int
    found_by_round: tuple[int, ...]  # gold snippets found in the evidence after each round
    stop_reason: str

    @property
    def rounds_used(self) -> int:
        return len(self.found_by_round)

    def found_after(self, round_number: int) -> int:
        """Found after ``round_number`` rounds; a loop that stopped earlier keeps its last count."""
        if not self.found_by_round:
            return 0
        return self.found_by_round[min(round_number, len(self.found_by_round)) - 1]


def score_case(case: CaseIn, result: retrieval_pb.RetrieveResult) -> CaseScore:
    gold = [g.must_contain for g in case.turns[-1].gold]
    rounds = max([len(result.rounds), *(p.round for p in result.paragraphs)], default=0)
    found = []
    for round_number in range(1, rounds + 1):
        evidence = [p.content for p in result.paragraphs if p.round <= round_number]
        found.append(sum(any(snippet in text for text in evidence) for snippet in gold))
    return CaseScore(
        id=case.id,
        kind=case.kind,
        question=case.turns[-1].question,
        problem_text=result.problem_text,
        gold_total=len(gold),
        found_by_round=tuple(found),
        stop_reason=STOP_REASON_NAMES.get(result.stop_reason, ""),
    )


def summarize(scores: Sequence[CaseScore]) -> dict[str, Any]:
    """Recall (share of gold snippets found) and all-gold questions after each round."""
    rounds = max((s.rounds_used for s in scores), default=0)
    gold = sum(s.gold_total for s in scores)
    by_round = []
    for round_number in range(1, rounds + 1):
        found = sum(s.found_after(round_number) for s in scores)
        complete = sum(s.found_after(round_number) == s.gold_total for s in scores)
        by_round.append(
            {"round": round_number, "recall": round(found / gold, 4) if gold else 0.0, "all_gold": complete}
        )
    return {
        "cases": len(scores),
        "gold": gold,
        "by_round": by_round,
        "rounds_used": dict(sorted(Counter(str(s.rounds_used) for s in scores).items())),
        "stop_reasons": dict(Counter(s.stop_reason for s in scores).most_common()),
    }


def case_json(score: CaseScore) -> dict[str, Any]:
    return {
        "id": score.id,
        "kind": score.kind,
        "question": score.question,
        "problem_text": score.problem_text,
        "gold": score.gold_total,
        "found_by_round": list(score.found_by_round),
        "rounds_used": score.rounds_used,
        "stop_reason": score.stop_reason,
    }
