"""Each dataset's newest change of embedding model, as the ``embedding_job`` table records it.

A read only, kept apart from the queue that runs the changes
(``services.retrieval.ingestion.jobs.reembed_queue``): the embedding spaces need it to find
where a running change writes, and what needs the spaces (the jobs among them) must not be
needed by them.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read
from kbcore.db.tables import EmbeddingJob


async def newest_switch(sessions: async_sessionmaker[AsyncSession], dataset_id: str) -> EmbeddingJob | None:
    return (await newest_switches(sessions, [dataset_id])).get(dataset_id)


async def newest_switches(
    sessions: async_sessionmaker[AsyncSession], dataset_ids: list[str] | None = None
) -> dict[str, EmbeddingJob]:
    """Each dataset's (of these, or every dataset's) newest change of model, by dataset id."""

    def work(session: Session) -> dict[str, EmbeddingJob]:
        newest = select(EmbeddingJob.dataset_id, func.max(EmbeddingJob.created_at).label("at"))
        if dataset_ids is not None:
            newest = newest.where(EmbeddingJob.dataset_id.in_(dataset_ids))
        latest = newest.group_by(EmbeddingJob.dataset_id).subquery()
        rows = session.scalars(
            select(EmbeddingJob).join(
                latest, (latest.c.dataset_id == EmbeddingJob.dataset_id) & (latest.c.at == EmbeddingJob.created_at)
            )
        ).all()
        return {row.dataset_id: row for row in rows}

    return await run_read(sessions, work) if dataset_ids is None or dataset_ids else {}
