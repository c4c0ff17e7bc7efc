"""Saving a question's outcome to its record, the step that must succeed before ``done``.

A database that refuses connections for a moment (a restart, a failover, a full pool) should
not cost the answer, so an outage is retried briefly. When the record still cannot be saved the
caller is told so, instead of being told the answer ended: the reason is returned, never
swallowed, and ``AskFlow`` ends the stream with it in place of ``done``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kbcore.db.faults import is_outage
from kbcore.errors import Unavailable
from services.chat.store import ChatStore

log = logging.getLogger(__name__)

# Seconds between attempts: four attempts within about two seconds.
RETRY_DELAYS = (0.2, 0.5, 1.0)
NOT_SAVED = "the answer could not be saved because the database is unavailable; ask again shortly"
TAKEN_OVER = "the answer was not saved: this chat was taken over by another process; ask again"


async def save_outcome(store: ChatStore, record_id: int, values: dict[str, Any]) -> BaseException | None:
    """Write ``values`` to the running record; None when saved, else why it was not (an
    Unavailable after a lasting outage or a take-over, the error itself for anything else)."""
    for attempt, delay in enumerate((*RETRY_DELAYS, None), start=1):
        try:
            if await store.finish_record(record_id, **values):
                return None
            log.warning("record %s was taken over by another holder; its outcome is not saved", record_id)
            return Unavailable(TAKEN_OVER)
        except Exception as error:
            if not is_outage(error):
                log.exception("could not save record %s", record_id)
                return error
            if delay is None:
                log.error("could not save record %s after %d attempts: %s", record_id, attempt, error)
                return Unavailable(NOT_SAVED)
            log.warning("saving record %s failed (attempt %d), retrying: %s", record_id, attempt, error)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable: the last attempt returns")
