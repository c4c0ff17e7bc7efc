"""BM25-style sparse vectors built from jieba tokens, so keyword search is the same on every backend.

Neither qdrant-client's local mode nor a stock Qdrant tokenizer segments unsegmented Chinese
the same way, so keyword search does not rely on any engine-side tokenizer: the text is
segmented here (``kbcore.text.segment``), each token is hashed to a fixed sparse dimension, and the
document side carries BM25's term-frequency saturation. Qdrant multiplies in the IDF itself
(the sparse vector is configured with the IDF modifier), so a score is
``sum(idf(t) * tf_weight(t))`` over the distinct query tokens ``t`` — BM25 without a
vocabulary file or a fitted model, identical wherever the same points are stored.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from kbcore.text.segment import segment

K1 = 1.2  # term-frequency saturation
B = 0.75  # length normalisation
# Fixed, not measured: a corpus-wide mean would change every stored weight as data arrives.
# Paragraphs of 60-300 Chinese characters segment to roughly 30-150 search tokens.
AVG_LEN = 64.0

_INDEX_MASK = 0x7FFF_FFFF  # 31 bits: a non-negative index on every Qdrant client


@dataclass(frozen=True)
class SparseTerms:
    """A sparse vector: strictly increasing indices and their positive weights."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __bool__(self) -> bool:
        return bool(self.indices)


def term_index(token: str) -> int:
    """Sparse dimension of ``token``: first 4 bytes of BLAKE2b (big-endian), masked to 31 bits.

    A keyed-free cryptographic hash rather than ``hash()``, which is salted per process and
    would scatter the same word over different dimensions after a restart.
    """
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big") & _INDEX_MASK


def _merge(weights: Iterable[tuple[int, float]]) -> SparseTerms:
    """Sum weights that share an index (a hash collision) and sort, as Qdrant requires unique indices."""
    merged: dict[int, float] = {}
    for index, weight in weights:
        merged[index] = merged.get(index, 0.0) + weight
    ordered = sorted(merged.items())
    return SparseTerms(tuple(i for i, _ in ordered), tuple(w for _, w in ordered))


def document_vector(text: str) -> SparseTerms:
    """Stored side: BM25 TF saturation ``tf*(k1+1) / (tf + k1*(1-b+b*len/avg_len))`` per token."""
    tokens = segment(text)
    if not tokens:
        return SparseTerms((), ())
    norm = K1 * (1.0 - B + B * len(tokens) / AVG_LEN)
    counts = Counter(tokens)
    return _merge((term_index(tok), tf * (K1 + 1.0) / (tf + norm)) for tok, tf in counts.items())


def query_vector(text: str) -> SparseTerms:
    """Query side: weight 1.0 per distinct token, so a repeated word does not count twice."""
    return _merge((term_index(tok), 1.0) for tok in dict.fromkeys(segment(text)))
