"""No record stays ``running`` after the process answering it died.

A process killed mid-answer cannot close its record; its lease stops being renewed and expires.
Each chat service marks such records ``interrupted`` when it starts and then once per lease TTL,
so a record is closed within about two TTLs of its holder's death even when nobody asks on that
chat again (asking marks it at once: ``ChatStore.record_question``).

A holder on this host that ``/proc`` proves dead is not waited for: each sweep frees its lease
and closes its records at once (``kbcore.db.lease.free_dead_holders``), so a chat service that
starts after a crash finds the crashed one's chats free. Holders on other hosts keep the rule
above.
"""

from __future__ import annotations

import asyncio
import logging

from services.chat.store import ChatStore

log = logging.getLogger(__name__)


async def sweep_once(store: ChatStore) -> int:
    """One sweep; a database that is away is logged and tried again at the next one."""
    try:
        marked = await store.sweep_interrupted()
    except Exception as error:
        log.warning("sweeping records left running failed: %s", error)
        return 0
    if marked:
        log.warning("marked %d record(s) left running by a stopped process as interrupted", marked)
    return marked


async def keep_sweeping(store: ChatStore, every: float) -> None:
    """Sweep every ``every`` seconds until cancelled (with the server)."""
    while True:
        await asyncio.sleep(every)
        await sweep_once(store)
