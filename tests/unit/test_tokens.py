"""Token shortcuts decide exactly as tokenizing would."""

from __future__ import annotations

import random

from kbcore.text.tokens import clip_tokens, count_tokens, encoding, fits_tokens, token_bound
from services.retrieval.search.loop import TokenBudget

ALPHABET = "中文资料第条款期限，。！？abc XYZ 0123\n😀ﬁ"


def texts(seed: int, count: int, longest: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def test_the_byte_bound_is_never_below_the_token_count() -> None:
    for text in texts(1, 500, 80):
        assert count_tokens(text) <= token_bound(text)


def test_fits_and_clip_agree_with_tokenizing() -> None:
    for text in texts(2, 300, 60):
        for limit in (1, 5, 20, 60, 400):
            tokens = encoding().encode(text, disallowed_special=())
            assert fits_tokens(text, limit) == (len(tokens) <= limit)
            expected = text if len(tokens) <= limit else encoding().decode(tokens[:limit]).rstrip("\ufffd")
            assert clip_tokens(text, limit) == (expected if text else "")


def test_the_evidence_budget_takes_what_exact_counting_takes() -> None:
    rng = random.Random(3)
    for round_ in range(200):
        limit = rng.choice([10, 50, 200, 1000])
        budget, used = TokenBudget(limit), 0
        for text in texts(round_, rng.randint(1, 12), 120):
            size = count_tokens(text)
            exact = used + size <= limit
            assert budget.take(text) == exact, (limit, used, size)
            if exact:
                used += size
