"""The loop every job worker of a retrieval process runs: claim a job, work on it, and when there
is none wait for the next poll or a wake-up, whichever comes first. A worker runs ``slots`` such
loops side by side, each on a job of its own (one unless told otherwise). The ingestion worker
and the change of embedding model each run one over their own table."""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

Job = TypeVar("Job")


class ClaimingWorker(abc.ABC, Generic[Job]):
    def __init__(
        self,
        claim: Callable[[str], Awaitable[Job | None]],
        poll_seconds: float,
        purpose: str,
        jobs: str,
        slots: int = 1,
    ) -> None:
        """``claim(holder)`` takes a job for ``holder``; ``purpose`` starts the holder's name and
        ``jobs`` says in the log what a job is ("an ingestion job"); ``slots`` jobs are worked on
        at once, all under the one holder (each job's lease is its own)."""
        self._claim = claim
        self._poll = poll_seconds
        self._jobs = jobs
        self._slots = max(1, slots)
        self.holder = f"{purpose}-{uuid.uuid4().hex}"
        self._wake = asyncio.Event()

    @abc.abstractmethod
    async def process(self, job: Job) -> None:
        """Work on a claimed job until it ends or is no longer ours."""

    def wake(self) -> None:
        """A job was queued in this process: look now rather than at the next poll."""
        self._wake.set()

    async def run(self) -> None:
        await asyncio.gather(*(self._slot() for _ in range(self._slots)))

    async def _slot(self) -> None:
        while True:
            try:
                job = await self._claim(self.holder)
            except Exception:  # the database is away: try again at the next poll
                log.exception("could not claim %s", self._jobs)
                job = None
            if job is not None:
                await self.process(job)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._poll)
            self._wake.clear()

    async def drain(self) -> int:
        """Process queued jobs until none is left to claim (the bench and offline loading, which
        run no server); returns how many were processed."""
        processed = 0
        while (job := await self._claim(self.holder)) is not None:
            await self.process(job)
            processed += 1
        return processed
