"""Grouping short texts by meaning (the gap report's "similar gaps together").

It lives here because the embedder does: the chat service sends the texts and gets index groups
back, so no second copy of a model is loaded anywhere.

Calibration (the dev questions against the sample knowledge base with half its documents
removed, the offline assessment's gaps split into their quoted parts): e5 cosines crowd
together (the gaps' pairwise mean was 0.865, standard deviation 0.022; unrelated Chinese
questions score about 0.8), so no fixed threshold carries over to another embedder. The
threshold is therefore set relative to the spread of the cosines among the texts together with
a fixed set of unrelated background questions (which keep the statistic meaningful for a
handful of texts): their mean plus ``SPREAD`` standard deviations. Average linkage on that
threshold put the gaps of each removed document together (pairwise precision about 0.64,
recall about 0.7 over random subsets of 4–60 gaps; a fixed 0.9 did about as well on e5 but
means nothing for another model); what it still merges is two documents of one organisation
(its leave and expense policies).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kbcore.errors import InvalidRequest
from kbcore.words.said import said
from services.retrieval.embedding.embedders import Embedder

MAX_TEXTS = 2000
MAX_TEXT_CHARS = 500
SPREAD = 2.1
# Questions about nothing a knowledge base of ours holds: the scale the texts are measured on.
BACKGROUND = (
    "明天北京会下雨吗",
    "红烧肉怎么做才好吃",
    "世界杯上一届冠军是哪个国家",
    "怎么给手机换电池",
    "长城有多长",
    "学习英语有什么好方法",
    "猫为什么喜欢晒太阳",
    "股票市场今天涨了吗",
    "如何申请护照",
    "高铁票可以改签几次",
    "牙齿疼应该看哪个科",
    "电脑开机很慢怎么办",
    "怎样种好番茄",
    "火星上有水吗",
    "结婚证怎么补办",
    "钢琴考级有几级",
)

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Group:
    members: list[int]  # indexes into the texts, ascending
    central: int  # the member nearest the group's mean


def check_texts(texts: Sequence[str]) -> None:
    if not texts:
        raise InvalidRequest(said("texts_must_hold_least_one_text"))
    if len(texts) > MAX_TEXTS:
        raise InvalidRequest(said("most_texts_can_be_grouped_once", max_texts=MAX_TEXTS, len_texts=len(texts)))
    too_long = [i for i, text in enumerate(texts) if len(text) > MAX_TEXT_CHARS]
    if too_long:
        raise InvalidRequest(said("text_longer_characters", too_long_0=too_long[0], max_text_chars=MAX_TEXT_CHARS))


async def group_texts(embedder: Embedder, texts: Sequence[str]) -> list[Group]:
    """Every text in exactly one group, largest groups first (ties: first member first)."""
    check_texts(texts)
    filled = [i for i, text in enumerate(texts) if text.strip()]
    groups = [Group([i], i) for i, text in enumerate(texts) if not text.strip()]
    if filled:
        # Through the query cache: the same gaps come back in every report.
        vectors = np.asarray(await asyncio.gather(*(embedder.embed_query(texts[i].strip()) for i in filled)))
        background = np.asarray(await asyncio.gather(*(embedder.embed_query(text) for text in BACKGROUND)))
        threshold = relative_threshold(np.vstack([vectors, background]))
        for members in average_linkage(vectors, threshold):
            central = members[int(np.argmax(vectors[members] @ vectors[members].sum(axis=0)))]
            groups.append(Group(sorted(filled[m] for m in members), filled[central]))
    return sorted(groups, key=lambda g: (-len(g.members), g.members[0]))


def relative_threshold(vectors: Matrix) -> float:
    """The pairwise cosines' mean plus ``SPREAD`` standard deviations (rows are unit vectors)."""
    similarity = vectors @ vectors.T
    pairs = similarity[~np.eye(len(vectors), dtype=bool)]
    return float(pairs.mean() + SPREAD * pairs.std())


def average_linkage(vectors: Matrix, threshold: float) -> list[list[int]]:
    """Agglomerative clustering, average linkage, merging while the best pair is ≥ ``threshold``.

    With unit rows, the mean cosine between two groups is the dot product of their sums over
    the product of their sizes, so a merge updates one row; each row keeps its best partner so
    that finding the next merge is linear rather than quadratic (2,000 texts in about a second).
    """
    count = len(vectors)
    sums = vectors.astype(np.float64).copy()
    sizes = np.ones(count)
    members: list[list[int]] = [[i] for i in range(count)]
    alive = np.ones(count, dtype=bool)
    similarity = sums @ sums.T
    np.fill_diagonal(similarity, -np.inf)
    best = similarity.argmax(axis=1) if count > 1 else np.zeros(count, dtype=int)
    best_value = similarity[np.arange(count), best] if count > 1 else np.full(count, -np.inf)
    while count > 1:
        a = int(np.argmax(best_value))
        if best_value[a] < threshold:
            break
        b = int(best[a])
        sums[a] += sums[b]
        sizes[a] += sizes[b]
        members[a] += members[b]
        members[b] = []
        alive[b] = False
        row = (sums @ sums[a]) / (sizes * sizes[a])
        row[~alive] = -np.inf
        row[a] = -np.inf
        similarity[a, :] = row
        similarity[:, a] = row
        similarity[b, :] = -np.inf
        similarity[:, b] = -np.inf
        best_value[b] = -np.inf
        stale = np.flatnonzero((best == a) | (best == b))
        for i in [a, *stale.tolist()]:
            if alive[i]:
                best[i] = int(np.argmax(similarity[i]))
                best_value[i] = similarity[i, best[i]]
        better = np.flatnonzero(row > best_value)
        best[better] = a
        best_value[better] = row[better]
    return [sorted(group) for group in members if group]
