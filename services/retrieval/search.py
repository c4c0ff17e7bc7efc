"""One query against the vector store: embed it when the mode needs a vector, filter to the
application's datasets, apply its threshold and top_n."""

from __future__ import annotations

from dataclasses import dataclass

from kbcore.limits import DEFAULT_SEARCH_MODE, DEFAULT_SIMILARITY, DEFAULT_TOP_N
from services.retrieval.embeddings import Embedder
from services.retrieval.store.base import Hit, SearchMode, SearchQuery, VectorStore


@dataclass(frozen=True)
class SearchSettings:
    top_n: int = DEFAULT_TOP_N
    similarity: float = DEFAULT_SIMILARITY
    mode: SearchMode = SearchMode(DEFAULT_SEARCH_MODE)


class Searcher:
    def __init__(self, store: VectorStore, embedder: Embedder) -> None:
        self._store = store
        self._embedder = embedder

    async def search(self, dataset_ids: tuple[str, ...], text: str, settings: SearchSettings) -> list[Hit]:
        vector = None
        if settings.mode is not SearchMode.KEYWORD:
            vector = await self._embedder.embed_query(text)
        return await self._store.search(
            SearchQuery(
                dataset_ids=dataset_ids,
                text=text,
                vector=vector,
                mode=settings.mode,
                limit=settings.top_n,
                similarity=settings.similarity,
            )
        )
