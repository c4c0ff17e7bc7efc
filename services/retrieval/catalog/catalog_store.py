"""The catalog of datasets and documents (names, counts, content hashes) in the SQL database;
the paragraphs themselves live in the vector store. Each change an operator asks for adds its
audit row in the transaction that makes it (``kbcore.db.audit``; docs/access.md)."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.audit import record_action
from kbcore.db.lookup import require_row
from kbcore.db.tables import Application, Dataset, Document, UserGrant, new_id, utcnow
from kbcore.errors import Conflict, NotFound
from kbcore.words.said import said
from services.retrieval.catalog.known_ids import KnownIds

DATASET_GRANT = "dataset"  # user_grant.object_kind of a dataset


class Catalog:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._known = KnownIds()  # datasets found to exist a moment ago: the per-question check skips SQL

    async def create_dataset(
        self,
        name: str,
        description: str,
        dataset_id: str | None = None,
        *,
        embedding_model_id: str = "",
        embedding_dimension: int = 0,
        granted_to: str = "",
        reuse_existing: bool = True,
    ) -> Dataset:
        """A new dataset on its embedding model ("" = the default); an existing id returns that
        dataset, unless ``reuse_existing`` is False (its creator may not see it): then Conflict.
        ``granted_to`` names the user the new dataset is granted to, in the transaction that
        creates it, so its creator can use it at once (docs/access.md, People and roles)."""
        async with self._sessions.begin() as session:
            if dataset_id:
                existing = await session.get(Dataset, dataset_id)
                if existing is not None and not reuse_existing:
                    raise Conflict(said("dataset_id_taken_choose_another_leave", dataset_id=f"{dataset_id!r}"))
                if existing is not None:
                    return existing
            dataset = Dataset(
                id=dataset_id or new_id(),
                name=name,
                description=description,
                embedding_model_id=embedding_model_id,
                embedding_dimension=embedding_dimension,
                embedding_pending_id=None,
                embedding_error=None,
            )
            session.add(dataset)
            record_action(session, "dataset.create", "dataset", dataset.id, name)
            if granted_to:
                session.add(UserGrant(user_id=granted_to, object_kind=DATASET_GRANT, object_id=dataset.id))
        return dataset

    async def change_dataset(
        self, dataset_id: str, name: str | None, description: str | None, sync_hours: int | None = None
    ) -> None:
        """The fields given (None: left as is); the audit row names those that changed, not their
        values. A new sync schedule's first sync is one period from now."""
        async with self._sessions.begin() as session:
            dataset = await session.get(Dataset, dataset_id, with_for_update=True)
            if dataset is None:
                raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
            changed = [
                field
                for field, given, current in (
                    ("name", name, dataset.name),
                    ("description", description, dataset.description),
                    ("sync schedule", sync_hours, dataset.sync_hours),
                )
                if given is not None and given != current
            ]
            if name is not None:
                dataset.name = name
            if description is not None:
                dataset.description = description
            if sync_hours is not None and sync_hours != dataset.sync_hours:
                dataset.sync_hours = sync_hours
                dataset.sync_due_at = utcnow() + dt.timedelta(hours=sync_hours) if sync_hours else None
            if changed:
                record_action(session, "dataset.update", "dataset", dataset_id, dataset.name, ", ".join(changed))

    async def get_dataset(self, dataset_id: str) -> Dataset:
        return await require_row(
            self._sessions, Dataset, dataset_id, lambda key: said("dataset_does_not_exist", dataset_id=key)
        )

    async def missing_datasets(self, dataset_ids: list[str]) -> list[str]:
        """The ids that name no dataset; those found to exist within seconds are not looked up again."""
        unknown = self._known.unknown(dataset_ids)
        if not unknown:
            return []
        async with self._sessions() as session:
            found = set((await session.scalars(select(Dataset.id).where(Dataset.id.in_(unknown)))).all())
        self._known.found(found)
        return [d for d in unknown if d not in found]

    async def dataset_names(self, dataset_ids: list[str]) -> dict[str, str]:
        """The names of the datasets ``dataset_ids`` names (a deleted one is left out)."""
        if not dataset_ids:
            return {}
        async with self._sessions() as session:
            rows = await session.execute(select(Dataset.id, Dataset.name).where(Dataset.id.in_(dataset_ids)))
        return {row.id: row.name for row in rows}

    async def list_datasets(self) -> list[tuple[Dataset, int, int]]:
        """Every dataset with its document and paragraph counts."""
        async with self._sessions() as session:
            counts = (
                select(
                    Document.dataset_id,
                    func.count(Document.id).label("documents"),
                    func.coalesce(func.sum(Document.paragraph_count), 0).label("paragraphs"),
                )
                .group_by(Document.dataset_id)
                .subquery()
            )
            rows = await session.execute(
                select(Dataset, counts.c.documents, counts.c.paragraphs)
                .outerjoin(counts, counts.c.dataset_id == Dataset.id)
                .order_by(Dataset.created_at, Dataset.id)
            )
            return [(d, int(docs or 0), int(paras or 0)) for d, docs, paras in rows.all()]

    async def delete_dataset(self, dataset_id: str) -> list[Application]:
        """Delete the dataset and its documents, and take it out of every application that uses it,
        in one transaction: an application never names a dataset that no longer exists (its next
        question would fail). Returns the applications that changed."""
        async with self._sessions.begin() as session:
            self._known.forget(dataset_id)
            dataset = await session.get(Dataset, dataset_id)
            if dataset is None:
                raise NotFound(said("dataset_does_not_exist", dataset_id=dataset_id))
            documents = (await session.scalars(select(Document).where(Document.dataset_id == dataset_id))).all()
            for document in documents:
                await session.delete(document)
            # The mappers know no order between the two tables: unflushed, the dataset's DELETE
            # could run first and cascade, leaving the documents' DELETE matching no row.
            await session.flush()
            await session.delete(dataset)
            # Its grants go with it: a dataset made later under the same id is not theirs.
            await session.execute(
                delete(UserGrant).where(UserGrant.object_kind == DATASET_GRANT, UserGrant.object_id == dataset_id)
            )
            detached = []
            # Every application is read: the JSON list cannot be searched the same way on both
            # databases, and applications are few.
            for application in (await session.scalars(select(Application).with_for_update())).all():
                if dataset_id in (application.dataset_ids or []):
                    application.dataset_ids = [d for d in application.dataset_ids if d != dataset_id]
                    detached.append(application)
            taken = f"documents: {len(documents)}, applications detached: {len(detached)}"
            record_action(session, "dataset.delete", "dataset", dataset_id, dataset.name, taken)
            return detached

    async def delete_document(self, dataset_id: str, document_id: str) -> None:
        async with self._sessions.begin() as session:
            document = await session.get(Document, document_id)
            if document is None or document.dataset_id != dataset_id:
                raise NotFound(said("document_does_not_exist_dataset", document_id=document_id, dataset_id=dataset_id))
            await session.delete(document)
            record_action(session, "document.delete", "document", document_id, document.name, f"dataset {dataset_id}")
