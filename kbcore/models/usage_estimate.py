"""Token usage estimated locally, for answers whose server reports none (or that never had one)."""

from __future__ import annotations

from collections.abc import Sequence

from kbcore.models.base import ChatMessage, Usage
from kbcore.text.tokens import count_tokens


def estimate_usage(messages: Sequence[ChatMessage], answer: str) -> Usage:
    return Usage(
        prompt_tokens=sum(count_tokens(m.content) for m in messages),
        completion_tokens=count_tokens(answer),
    )
