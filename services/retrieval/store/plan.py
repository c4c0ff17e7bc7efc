"""What a search asks of the engine, decided once for both backends.

A ``SearchQuery`` becomes at most one dense leg, at most one sparse leg, and whether the legs
are fused. Each backend only renders this plan with its own client types, so modes, limits,
thresholds and the empty-keyword rule cannot drift between them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.retrieval.store.base import SearchMode, SearchQuery
from services.retrieval.store.layout import dense_vector, question_key
from services.retrieval.store.sparse import SparseTerms, query_vector

RRF_K = 60  # the usual reciprocal-rank-fusion constant: damps the weight of the very top ranks
MIN_CANDIDATES = 20
# Hits asked beyond the limit, so that scores tied at the cut are decided by ``layout.ranked``
# (stable, by id) and not by the engine, which orders ties arbitrarily, even between two calls.
TIE_ROOM = 5


@dataclass(frozen=True)
class DenseLeg:
    vector: list[float]
    # Cosine must be strictly greater: qdrant-edge and qdrant-client both drop score == threshold.
    threshold: float


@dataclass(frozen=True)
class SearchPlan:
    dataset_ids: list[str]
    dense: DenseLeg | None
    sparse: SparseTerms | None
    fuse: bool  # RRF over the legs present, instead of one leg's raw scores
    limit: int  # final number of hits
    candidates: int  # per leg, when fused

    @property
    def fetch(self) -> int:
        """What the engine returns: the limit and room for ties at the cut."""
        return self.limit + TIE_ROOM


def candidates_for(limit: int) -> int:
    """Each fused leg fetches more than the final limit, or RRF could only reorder the same few."""
    return max(limit * 4, MIN_CANDIDATES)


def plan_search(query: SearchQuery, dimension: int) -> SearchPlan | None:
    """The plan for ``query``, or None when nothing can match (no limit, or no keyword tokens)."""
    if not query.dataset_ids:
        raise ValueError("search needs at least one dataset id")
    if query.limit <= 0:
        return None
    dense: DenseLeg | None = None
    if query.mode in (SearchMode.VECTOR, SearchMode.HYBRID):
        if query.vector is None:
            raise ValueError(f"{query.mode.value} search needs a query vector")
        dense = DenseLeg(dense_vector(query.vector, dimension), query.similarity)
    sparse: SparseTerms | None = None
    if query.mode in (SearchMode.KEYWORD, SearchMode.HYBRID):
        # Only stopwords or punctuation: keyword search has nothing to look for.
        sparse = query_vector(query.text) or None
        if sparse is None and dense is None:
            return None
    return SearchPlan(
        dataset_ids=list(dict.fromkeys(query.dataset_ids)),
        dense=dense,
        sparse=sparse,
        # Hybrid stays fused even with one leg left, so its scores are always RRF scores.
        fuse=query.mode is SearchMode.HYBRID,
        limit=query.limit,
        candidates=candidates_for(query.limit),
    )


def plan_question_search(
    dataset_ids: Sequence[str], vector: Sequence[float], limit: int, similarity: float, dimension: int
) -> SearchPlan | None:
    """A dense search of the datasets' attached questions: the plan of a vector search whose
    dataset filter names their question keys (``layout.question_key``)."""
    if not dataset_ids:
        return None
    query = SearchQuery(
        dataset_ids=tuple(question_key(d) for d in dataset_ids),
        text="",
        vector=vector,
        mode=SearchMode.VECTOR,
        limit=limit,
        similarity=similarity,
    )
    return plan_search(query, dimension)
