"""Turn a summary and recent turns into model messages within a token budget.

Pure functions: no database, no model. A turn that fits is kept whole; otherwise its
question gets min(tokens(question), max(64, turn_budget/2)) and its answer the rest (≥ 64).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from kbcore.models.base import ChatMessage
from kbcore.models.prompts import SUMMARY_PREFIX
from kbcore.text.tokens import clip_tokens, count_tokens

MIN_PART_TOKENS = 64
MIN_REMAINING_TOKENS = 128


@dataclass(frozen=True)
class Turn:
    id: int
    question: str
    answer: str

    @property
    def tokens(self) -> int:
        return count_tokens(self.question) + count_tokens(self.answer)


def summary_message(summary: str) -> ChatMessage:
    return ChatMessage("user", SUMMARY_PREFIX + summary)


def estimate(summary: str, turns: Sequence[Turn]) -> int:
    """The estimate compared with the budget: the summary plus every uncompacted turn, whole."""
    return count_tokens(summary) + sum(t.tokens for t in turns)


def assemble(summary: str, turns: Sequence[Turn], budget: int) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    if summary.strip():
        messages.append(summary_message(summary))
    remaining = max(MIN_REMAINING_TOKENS, budget - count_tokens(summary))
    for turn in turns:
        whole = turn.tokens
        turn_budget = min(remaining, whole)
        if whole <= remaining:
            messages += [ChatMessage("user", turn.question), ChatMessage("assistant", turn.answer)]
        else:
            question_budget = min(count_tokens(turn.question), max(MIN_PART_TOKENS, turn_budget // 2))
            answer_budget = max(MIN_PART_TOKENS, turn_budget - question_budget)
            messages += [
                ChatMessage("user", clip_tokens(turn.question, question_budget)),
                ChatMessage("assistant", clip_tokens(turn.answer, answer_budget)),
            ]
        remaining -= turn_budget
    return messages


def messages_tokens(messages: Sequence[ChatMessage]) -> int:
    """Estimated size of what is sent, measured on its compact JSON form (no spaces), close to the request body's."""
    payload = [{"role": m.role, "content": m.content} for m in messages]
    return count_tokens(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))
