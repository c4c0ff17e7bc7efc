"""Datasets with their embedding models: created on a registered embedding model or
the deployment's default, renamed, moved to another model (a background re-embedding, see
``ingestion.jobs.reembed_queue``), and shown with their model and the newest change of it.

A model is checked when it is chosen — registered, for embeddings, answering — and the size of
its vectors recorded with the dataset, so a wrong choice is a clear 400 at once and never a
failing ingestion later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

import services.retrieval.retrieval_messages as convert
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.tables import ModelEndpoint
from kbcore.embedding_rule import DEFAULT_MODEL_LABEL, model_label
from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_NAME_CHARS
from kbcore.permissions.roles import Kind, Need, Principal, allows
from kbcore.words.said import said
from services.retrieval.catalog.catalog_store import Catalog
from services.retrieval.embedding.model_switches import newest_switches
from services.retrieval.embedding.spaces import EmbeddingSpaces
from services.retrieval.ingestion.jobs.reembed_queue import Change, SwitchQueue
from services.retrieval.ingestion.web_sync import check_sync_hours

MAX_DESCRIPTION_CHARS = 5000


def checked_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidRequest(said("dataset_name_must_not_be_empty"))
    if len(name) > MAX_NAME_CHARS:
        raise InvalidRequest(said("dataset_name_longer_characters", max_name_chars=MAX_NAME_CHARS))
    return name


class DatasetAdmin:
    def __init__(
        self,
        catalog: Catalog,
        sessions: async_sessionmaker[AsyncSession],
        spaces: EmbeddingSpaces,
        switches: SwitchQueue,
        wake_switcher: Callable[[], None],
    ) -> None:
        self._catalog = catalog
        self._sessions = sessions
        self._spaces = spaces
        self._switches = switches
        self._wake_switcher = wake_switcher

    async def create(self, request: pb.CreateDatasetRequest, creator: Principal | None = None) -> pb.Dataset:
        """The new dataset, granted to ``creator`` when that is a person (None: one of the
        deployment's own processes). An id already taken returns its dataset only to a creator
        who may see it."""
        change = await self._change(request.embedding_model_id.strip())
        dataset_id = request.id.strip() or None
        dataset = await self._catalog.create_dataset(
            checked_name(request.name),
            request.description,
            dataset_id,
            embedding_model_id=change.model_id,
            embedding_dimension=change.dimension,
            granted_to=creator.user_id if creator is not None and creator.kind is Kind.USER else "",
            reuse_existing=creator is None or allows(creator, Need.DATASET_READ, dataset_id or ""),
        )
        return await self.view(dataset.id)

    async def update(self, request: pb.UpdateDatasetRequest) -> pb.Dataset:
        name = checked_name(request.name) if request.HasField("name") else None
        description = request.description if request.HasField("description") else None
        if description is not None and len(description) > MAX_DESCRIPTION_CHARS:
            raise InvalidRequest(
                said("dataset_description_longer_characters", max_description_chars=MAX_DESCRIPTION_CHARS)
            )
        dataset = await self._catalog.get_dataset(request.dataset_id)
        if request.HasField("embedding_model_id"):
            model_id = request.embedding_model_id.strip()
            known = model_id in (dataset.embedding_model_id, dataset.embedding_pending_id)
            # A model already chosen (its own, or the one a change is going to) needs no check.
            change = Change(model_id, 0, model_label(model_id, "")) if known else await self._change(model_id)
            if await self._switches.request(dataset.id, change):
                self._wake_switcher()
        sync_hours = request.sync_hours if request.HasField("sync_hours") else None
        if sync_hours is not None:
            check_sync_hours(sync_hours)
        if name is not None or description is not None or sync_hours is not None:
            await self._catalog.change_dataset(dataset.id, name, description, sync_hours)
        return await self.view(dataset.id)

    async def _change(self, model_id: str) -> Change:
        if not model_id:
            return Change("", self._spaces.default.dimension, DEFAULT_MODEL_LABEL)
        row = await self._spaces.models.require(model_id)
        dimension = await self._spaces.models.probe_dimension(model_id)
        return Change(model_id, dimension, model_label(model_id, row.name))

    async def view(self, dataset_id: str) -> pb.Dataset:
        for dataset in await self.views([dataset_id]):
            return dataset
        await self._catalog.get_dataset(dataset_id)  # NOT_FOUND in words
        raise AssertionError("unreachable")

    async def views(self, only: Iterable[str] | None = None) -> list[pb.Dataset]:
        """Every dataset (or ``only`` these) with counts, embedding model and newest change of model."""
        wanted = list(only) if only is not None else None
        # The changes are read before the datasets: a change seen ended is then seen with the
        # model it left the dataset on (read the other way round, a flip in between would show
        # a ready change beside the old model, and a client waiting for it would stop there).
        switches = await newest_switches(self._sessions, wanted)
        rows = [r for r in await self._catalog.list_datasets() if wanted is None or r[0].id in wanted]
        names = await self._model_names(d.embedding_model_id for d, _, _ in rows)
        return [
            convert.dataset(
                d,
                docs,
                paras,
                default_dimension=self._spaces.default.dimension,
                model_name=names.get(d.embedding_model_id, ""),
                switch=switches.get(d.id),
            )
            for d, docs, paras in rows
        ]

    async def _model_names(self, model_ids: Iterable[str]) -> dict[str, str]:
        ids = {m for m in model_ids if m}
        if not ids:
            return {}
        async with self._sessions() as session:
            rows = await session.execute(select(ModelEndpoint.id, ModelEndpoint.name).where(ModelEndpoint.id.in_(ids)))
        return {model_id: name for model_id, name in rows.all()}
