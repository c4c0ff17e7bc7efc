"""The keyword sparse vectors: indices fixed by the spec (not by the process), BM25 weights."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from kbcore.text.segment import segment
from services.retrieval.store.sparse import AVG_LEN, K1, B, document_vector, query_vector, term_index

ROOT = Path(__file__).resolve().parents[2]


def spec_index(token: str) -> int:
    """The documented rule, restated: BLAKE2b-32 of the UTF-8 token, big-endian, low 31 bits."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "big") & 0x7FFFFFFF


def test_term_index_follows_the_documented_hash() -> None:
    for token in ("不可抗力", "474.05", "年休假", "qdrant"):
        assert term_index(token) == spec_index(token)
        assert 0 <= term_index(token) < 2**31
    assert term_index("年休假") != term_index("年假")


def test_term_index_is_the_same_in_another_process() -> None:
    """Python's own hash() is salted per process; the stored indices must survive a restart."""
    tokens = ["不可抗力", "年休假", "报销"]
    script = f"from services.retrieval.store.sparse import term_index; print([term_index(t) for t in {tokens!r}])"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == str([term_index(t) for t in tokens])


def test_document_weights_saturate_and_normalise_length() -> None:
    text = "年休假年休假年休假，病假。"
    tokens = segment(text)
    vector = document_vector(text)
    assert list(vector.indices) == sorted(set(vector.indices))  # unique and increasing, as Qdrant requires
    weights = dict(zip(vector.indices, vector.values, strict=True))
    norm = K1 * (1 - B + B * len(tokens) / AVG_LEN)
    tf = tokens.count("年休假")
    assert tf >= 3
    assert weights[term_index("年休假")] == tf * (K1 + 1) / (tf + norm)
    assert weights[term_index("病假")] < weights[term_index("年休假")] < K1 + 1  # more is better, but bounded
    # The same word in a longer paragraph weighs less.
    longer = document_vector(text + "员工应当按照公司规定提前提交申请并经部门负责人审批后方可离岗。" * 3)
    assert dict(zip(longer.indices, longer.values, strict=True))[term_index("病假")] < weights[term_index("病假")]
    assert all(v > 0 for v in longer.values)


def test_query_weights_are_one_per_distinct_token() -> None:
    vector = query_vector("年休假 年休假 病假")
    distinct = {term_index(t) for t in segment("年休假 病假")}
    assert {term_index("年休假"), term_index("病假")} <= distinct
    assert list(vector.indices) == sorted(distinct)
    assert set(vector.values) == {1.0}


def test_stopwords_and_punctuation_give_no_terms() -> None:
    for text in ("", "   ", "的了吗？！", "，。、；：", "请问是否有没有"):
        assert not query_vector(text)
        assert not document_vector(text)
