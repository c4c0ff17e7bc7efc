"""The optional rerank of each retrieval round, between search and evidence admission.

With a rerank model chosen, each query of a round is searched for ``CANDIDATE_FACTOR`` times the
application's top_n candidates; the rerank endpoint scores each query's candidates against that
query (a follow-up query targets what is missing, so its hits are judged by it, not by the
first question), and the best top_n of each, in rerank order, go on to evidence admission with
their scores kept for the trace. When the endpoint fails, each query keeps its first top_n in
the search's own order and the round's trace says why: a reranker down never fails a question.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kbcore.limits import MAX_TOP_N
from kbcore.models.rerank import RerankEndpoints, RerankError
from services.retrieval.search.query import SearchSettings
from services.retrieval.store.base import Hit

log = logging.getLogger(__name__)

CANDIDATE_FACTOR = 3


@dataclass(frozen=True)
class RerankedRound:
    """A round's hits per query after the rerank, the rerank score of each hit kept (by id),
    and why the rerank did not happen ("" when it did)."""

    results: list[list[Hit]]
    scores: dict[str, float]
    error: str = ""


def candidate_settings(settings: SearchSettings) -> SearchSettings:
    """The search for a reranked round: more candidates than are kept, for the reranker to choose from."""
    return replace(settings, top_n=min(settings.top_n * CANDIDATE_FACTOR, MAX_TOP_N))


@dataclass(frozen=True)
class RoundReranker:
    endpoints: RerankEndpoints
    endpoint_id: str
    keep: int  # the application's top_n

    async def __call__(self, queries: Sequence[str], results: Sequence[Sequence[Hit]]) -> RerankedRound:
        try:
            ranked = await asyncio.gather(*(self._one(q, hits) for q, hits in zip(queries, results, strict=True)))
        except RerankError as exc:
            log.warning("rerank failed, keeping the search order: %s", exc)
            return RerankedRound([list(hits[: self.keep]) for hits in results], {}, str(exc))
        scores: dict[str, float] = {}
        for pairs in ranked:  # a paragraph found by both queries is admitted (and scored) under the first
            for hit, score in pairs:
                scores.setdefault(hit.id, score)
        return RerankedRound([[hit for hit, _ in pairs] for pairs in ranked], scores)

    async def _one(self, query: str, hits: Sequence[Hit]) -> list[tuple[Hit, float]]:
        if not hits:
            return []
        ranked = await self.endpoints.rerank(self.endpoint_id, query, [_document(h) for h in hits])
        return [(hits[r.index], r.score) for r in ranked[: self.keep]]


def _document(hit: Hit) -> str:
    """What the reranker reads of a paragraph: its title over its content, as the answer's model sees it."""
    return f"{hit.title}\n{hit.content}" if hit.title else hit.content
