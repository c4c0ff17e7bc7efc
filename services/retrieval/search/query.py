"""One query against the vector store: embed it when the mode needs a vector, filter to the
application's datasets, apply its threshold and top_n, and bring in the paragraphs of the
attached questions it matches."""

from __future__ import annotations

from dataclasses import dataclass

from kbcore.limits import DEFAULT_SEARCH_MODE, DEFAULT_SIMILARITY, DEFAULT_TOP_N
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.embedding.spaces import EmbeddingSpaces
from services.retrieval.search.attached_questions import with_attached_questions
from services.retrieval.store.base import Hit, SearchMode, SearchQuery, VectorStore


@dataclass(frozen=True)
class SearchSettings:
    top_n: int = DEFAULT_TOP_N
    similarity: float = DEFAULT_SIMILARITY
    mode: SearchMode = SearchMode(DEFAULT_SEARCH_MODE)


class Searcher:
    """Searches one store with one embedder, or, given ``spaces``, the store and
    embedder of the model the datasets were embedded by, with that model's similarity floor."""

    def __init__(self, store: VectorStore, embedder: Embedder, spaces: EmbeddingSpaces | None = None) -> None:
        self._store = store
        self._embedder = embedder
        self._spaces = spaces

    async def search(self, dataset_ids: tuple[str, ...], text: str, settings: SearchSettings) -> list[Hit]:
        store, embedder, similarity = self._store, self._embedder, settings.similarity
        if self._spaces is not None:
            space = await self._spaces.for_datasets(dataset_ids)
            store, embedder, similarity = space.store, space.embedder, space.threshold(similarity)
        vector = None
        if settings.mode is not SearchMode.KEYWORD:
            vector = await embedder.embed_query(text)
        hits = await store.search(
            SearchQuery(
                dataset_ids=dataset_ids,
                text=text,
                vector=vector,
                mode=settings.mode,
                limit=settings.top_n,
                similarity=similarity,
            )
        )
        if vector is None:
            return hits
        return await with_attached_questions(store, dataset_ids, vector, hits, settings.top_n)
