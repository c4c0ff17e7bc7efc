"""An ingestion job's original bytes in SQL, as ``ingest_source_chunk`` rows of
``UPLOAD_CHUNK_BYTES``: written in the transaction that queues the job, read back one row at a
time by the worker that parses it, deleted in the transaction that ends it.

SQL because any replica may claim the job and replicas share no disk; rows rather than one value
so that neither the request that stores a 50 MiB file nor the worker that feeds it to its parser
holds it whole (a value is read and written whole by every driver).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session

from kbcore.db.engine import run_read
from kbcore.db.tables import IngestSourceChunk
from kbcore.limits import UPLOAD_CHUNK_BYTES

# An upload's original: in memory when it is small by nature (a web page, paragraphs sent as
# JSON), else the checked file waiting in the local spool (``jobs.spool``).
Source = bytes | Path


def pieces(source: Source) -> Iterator[bytes]:
    """``source`` in pieces of at most ``UPLOAD_CHUNK_BYTES``, read from its file one at a time."""
    if isinstance(source, bytes):
        for start in range(0, len(source), UPLOAD_CHUNK_BYTES):
            yield source[start : start + UPLOAD_CHUNK_BYTES]
        return
    with source.open("rb") as file:
        while piece := file.read(UPLOAD_CHUNK_BYTES):
            yield piece


async def in_memory(data: bytes) -> AsyncIterator[bytes]:
    """Bytes already in memory (a request that sent a file whole) as the pieces a stream brings."""
    for piece in pieces(data):
        yield piece


async def in_file(path: Path) -> AsyncIterator[bytes]:
    """A spooled file's pieces, each read in a thread (a slow disk never holds the event loop)."""
    with path.open("rb") as file:
        while piece := await asyncio.to_thread(file.read, UPLOAD_CHUNK_BYTES):
            yield piece


def store_source(session: Session, job_id: str, source: Source) -> None:
    """The job's original as rows, in the caller's transaction (one piece in memory at a time:
    Core inserts, which the session does not keep)."""
    for seq, piece in enumerate(pieces(source)):
        session.execute(insert(IngestSourceChunk).values(job_id=job_id, seq=seq, data=piece))


def delete_source(session: Session, job_id: str) -> None:
    """The job has ended: its original is needed by nothing any more (the document keeps its
    digest, which is all an unchanged re-upload or a web sync compares)."""
    session.execute(delete(IngestSourceChunk).where(IngestSourceChunk.job_id == job_id))


async def read_source(sessions: async_sessionmaker[AsyncSession], job_id: str) -> AsyncIterator[bytes]:
    """The job's original, piece by piece in order, each read in a statement of its own."""
    seq = 0
    while (piece := await run_read(sessions, _piece_reader(job_id, seq))) is not None:
        yield piece
        seq += 1


def _piece_reader(job_id: str, seq: int) -> Callable[[Session], bytes | None]:
    query = select(IngestSourceChunk.data).where(IngestSourceChunk.job_id == job_id, IngestSourceChunk.seq == seq)

    def read(session: Session) -> bytes | None:
        found = session.scalar(query)
        return None if found is None else bytes(found)

    return read
