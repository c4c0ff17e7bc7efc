"""Giving a SQLite database's freed pages back to the disk while the services run.

Deleting rows (a finished or cancelled job's original, a deleted document, old chats) only
puts their pages on the database's free list: the file never shrinks by itself. With
``auto_vacuum = INCREMENTAL`` (``sqlite_files``) the free pages can be handed back a few at a
time: ``PRAGMA incremental_vacuum(N)`` moves N pages from the end of the file into free ones
and cuts the end off at the next checkpoint. The retrieval service looks every
``CHECK_SECONDS`` and frees ``STEP_PAGES`` (1 MiB of 4 KiB pages, about 10 ms) per write
transaction, yielding between steps: a question's write waits one step at most, never the whole
give-back. A step never waits for another process's write either (it is skipped and tried at the
next look). PostgreSQL's autovacuum does the same there; nothing runs for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from pathlib import Path

from kbcore.db.engine import SqliteSessions

log = logging.getLogger(__name__)

STEP_PAGES = 256
CHECK_SECONDS = 30.0


def free_pages(path: Path) -> int:
    """Pages on the database's free list: what a give-back would hand back."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None, timeout=0)) as connection:
        return int(connection.execute("PRAGMA freelist_count").fetchone()[0])


def _step(path: Path, pages: int) -> None:
    """One write transaction that hands back up to ``pages`` free pages, then a checkpoint that
    never waits (it cuts the file once no reader needs the old end; else a later one does).

    ``executescript`` because it steps the pragma to its end: ``execute`` stops after one row,
    and the pragma yields a row per page freed, so it would free a single page.
    """
    with contextlib.closing(sqlite3.connect(path, isolation_level=None, timeout=0)) as connection:
        connection.executescript(f"PRAGMA incremental_vacuum({int(pages)}); PRAGMA wal_checkpoint(PASSIVE);")


async def give_back_space(sessions: SqliteSessions) -> int:
    """Hand the database's free pages back in steps, each under this process's write lock and
    none waiting for another process's; returns the pages handed back."""
    path = sessions.database_path
    if path is None:
        return 0
    freed = 0
    while (free := await asyncio.to_thread(free_pages, path)) > 0:
        try:
            async with sessions.write_lock:
                await asyncio.to_thread(_step, path, min(free, STEP_PAGES))
        except sqlite3.OperationalError as exc:  # another process is writing: the next look
            log.debug("giving space back waits for the next look: %s", exc)
            break
        left = await asyncio.to_thread(free_pages, path)
        if left >= free:  # nothing moved (a database that is not incremental): stop here
            break
        freed += free - left
    return freed


async def keep_giving_back(sessions: SqliteSessions, every: float = CHECK_SECONDS) -> None:
    """``give_back_space`` every ``every`` seconds, for as long as the service runs."""
    while True:
        try:
            freed = await give_back_space(sessions)
            if freed:
                log.info("gave %d free pages of the SQLite database back to the disk", freed)
        except Exception:  # the file is away for a moment: the next look
            log.exception("could not give the SQLite database's free space back")
        await asyncio.sleep(every)
