"""Ingestion without a server: queue a document and process it in this process, for the bench
and offline loading. The same queue, worker and builder a retrieval server runs."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import Document
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.ingestion.jobs.queue import JobQueue, Upload
from services.retrieval.ingestion.jobs.sources import job_parser
from services.retrieval.ingestion.jobs.worker import IngestWorker
from services.retrieval.ingestion.parsing import ParseLimits
from services.retrieval.ingestion.version_build import VersionBuilder
from services.retrieval.store.base import VectorStore


class LocalIngestion:
    def __init__(
        self, sessions: async_sessionmaker[AsyncSession], store: VectorStore, embedder: Embedder, settings: Settings
    ) -> None:
        self.queue = JobQueue(sessions, settings.ingest_lease_seconds, store.identity)
        self.worker = IngestWorker(
            self.queue,
            VersionBuilder(store, embedder),
            job_parser(ParseLimits.from_settings(settings), self.queue.source),
            settings.ingest_poll_seconds,
            job_seconds=settings.ingest_job_seconds,
        )

    async def add(self, dataset_id: str, upload: Upload) -> Document:
        """The document once its job has ended (ready, or failed with its reason)."""
        document = await self.queue.submit(dataset_id, upload)
        await self.worker.drain()
        return (await self.queue.document(dataset_id, document.id))[0]
