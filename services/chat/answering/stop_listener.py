"""Stops that reach a question through the lease table, watched once per process.

A Stop served by another chat-service process sets ``stop_requested`` on the chat's lease row;
the holder notices it within ``STOP_POLL_SECONDS`` and acknowledges by renewing its lease. One
query per question per poll made the polls cost more of the chat service's CPU than anything
else it does for a question at 64 chats at once: here one task asks for every stop
requested, for all the questions this process runs, and only while it runs any. A lost lease
stops its question at the same poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from kbcore.db.lease import LeaseStore

log = logging.getLogger(__name__)
# A Stop that reached another process is seen within this, well inside the second it may take.
STOP_POLL_SECONDS = 0.25


@dataclass(frozen=True)
class _Watched:
    chat_id: str
    holder: str
    stop_requested: asyncio.Event
    lease_lost: asyncio.Event


class StopListener:
    def __init__(self, leases: LeaseStore, interval: float = STOP_POLL_SECONDS) -> None:
        self._leases = leases
        self._interval = interval
        self._watched: dict[int, _Watched] = {}
        self._poller: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def watching(
        self, chat_id: str, holder: str, stop_requested: asyncio.Event, lease_lost: asyncio.Event
    ) -> Iterator[None]:
        """Within the block, a stop requested for ``holder``'s lease on the chat, or the lease
        lost, sets ``stop_requested``."""
        watched = _Watched(chat_id, holder, stop_requested, lease_lost)
        key = id(watched)
        self._watched[key] = watched
        poller = self._poller
        if poller is None or poller.done() or poller.get_loop() is not asyncio.get_running_loop():
            self._poller = asyncio.create_task(self._poll())
        try:
            yield
        finally:
            del self._watched[key]

    async def _poll(self) -> None:
        """Every interval while anything is watched; ends when nothing is (started again by the next)."""
        while self._watched:
            await asyncio.sleep(self._interval)
            try:
                await self._check()
            except Exception:  # a database hiccup must not end the answers; the next poll retries
                log.exception("checking for stop requests failed")

    async def _check(self) -> None:
        waiting = [w for w in self._watched.values() if not w.stop_requested.is_set()]
        for watched in waiting:
            if watched.lease_lost.is_set():
                watched.stop_requested.set()
        if not any(not w.stop_requested.is_set() for w in waiting):
            return
        requested = await self._leases.stop_requests()
        for watched in waiting:
            if (watched.chat_id, watched.holder) in requested and not watched.stop_requested.is_set():
                watched.stop_requested.set()
                await self._leases.renew(watched.chat_id, watched.holder)  # the acknowledgement Stop waits for
