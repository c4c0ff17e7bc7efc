"""Saving a question's outcome to its record, the step that must succeed before ``done``.

A database that refuses connections for a moment (a restart, a failover, a full pool) should
not cost the answer, so an outage is retried briefly. When the record still cannot be saved the
caller is told so, instead of being told the answer ended: the reason is returned, never
swallowed, and ``AskFlow`` ends the stream with it in place of ``done``.

Text the database refuses is not an outage: a NUL that came in through a stored paragraph or a
model's answer (PostgreSQL cannot hold one in ``text``), a lone surrogate no driver can encode.
Retrying the same values would fail the same way, so the record is saved once more with every
text made storable (``kbcore.text.storable``): it closes with the answer the client was shown, less
the characters no store can hold, and only then is ``done`` sent.

Anything else the database refuses is refused for good (a constraint, a value out of range, a
fault of ours): the same write would fail again. The record then keeps the answer's text and says
that saving failed, with an error id, instead of staying ``running`` until a sweep closed it as if
its process had stopped, with the answer lost; the caller is told the answer was not saved.

A record the client was told is unsaved is closed later by this process (``close_later``), over a
sweep's guess too: during a long outage its lease lapses, and the sweep, which cannot know the
process lives, would otherwise have the last word (``ChatStore.close_unsaved``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any, Protocol

import grpc
from sqlalchemy import exc

from kbcore.db.faults import is_disk_full, is_outage
from kbcore.db.tables import RecordStatus
from kbcore.error_ids import new_error_id, with_error_id
from kbcore.errors import StorageFull, Unavailable
from kbcore.rpc.error_mapping import RpcError
from kbcore.text.storable import storable_text
from kbcore.words.said import Said, said
from services.chat.store import ChatStore

log = logging.getLogger(__name__)

# Seconds between attempts: four attempts within about two seconds.
RETRY_DELAYS = (0.2, 0.5, 1.0)
NOT_SAVED = said("answer_could_not_be_saved_because")
# The database refused the record for good: what the caller is told, and what the record says.
NOT_SAVED_FAULT = said("answer_could_not_be_saved")
KEPT_TEXT_ONLY = said("saving_answer_failed_only_text_was")
NOT_SAVED_DISK_FULL = said("answer_could_not_be_saved_because_2")
TAKEN_OVER = said("answer_was_not_saved_chat_was")
# After the client was told: the record is closed in the background, every second for ten minutes
# (the sweep closes it later still, should the outage last longer, saying only what it can know).
CLOSE_EVERY = 1.0
CLOSE_FOR = 600.0
_closing: set[asyncio.Task[None]] = set()


class Write(Protocol):
    """A write of a record's outcome (``ChatStore.finish_record``, ``ChatStore.close_unsaved``):
    False when the record was no longer the writer's to close."""

    def __call__(self, record_id: int, **values: Any) -> Awaitable[bool]: ...


async def save_outcome(store: ChatStore, record_id: int, values: dict[str, Any]) -> BaseException | None:
    """Write ``values`` to the running record; None when saved, else why it was not (an
    Unavailable after a lasting outage or a take-over, StorageFull for a full disk, an INTERNAL
    status with an error id when the database refused it for good and only the text was kept)."""
    for attempt, delay in enumerate((*RETRY_DELAYS, None), start=1):
        try:
            if await _finish(store.finish_record, record_id, values):
                return None
            log.warning("record %s was taken over by another holder; its outcome is not saved", record_id)
            return Unavailable(TAKEN_OVER)
        except Exception as error:
            if not is_outage(error):
                return await _keep_text(store, record_id, values, error)
            if delay is None:
                if is_disk_full(error):  # the sentence says it all, and what to do
                    log.error("could not save record %s after %d attempts: %s", record_id, attempt, error)
                    close_later(store, record_id, _interrupted(values, NOT_SAVED_DISK_FULL))
                    return StorageFull(NOT_SAVED_DISK_FULL)
                error_id = new_error_id()
                log.error(
                    "could not save record %s after %d attempts (error id %s): %s", record_id, attempt, error_id, error
                )
                reason = with_error_id(NOT_SAVED, error_id)
                close_later(store, record_id, _interrupted(values, reason))
                return Unavailable(reason)
            log.warning("saving record %s failed (attempt %d), retrying: %s", record_id, attempt, error)
            await asyncio.sleep(delay)
    raise AssertionError("unreachable: the last attempt returns")


def _interrupted(values: dict[str, Any], error: Said) -> dict[str, Any]:
    """``values`` as an unsaved record is closed with: the answer kept, and why it is not whole."""
    return {**values, "status": RecordStatus.INTERRUPTED, "error": error}


async def _keep_text(store: ChatStore, record_id: int, values: dict[str, Any], error: Exception) -> BaseException:
    """The database refused the outcome for good: keep the answer's text in the record, saying
    that saving failed (a database away by now gets it later); the caller's reason names the same
    error id as the log line with the traceback."""
    error_id = new_error_id()
    log.error("could not save record %s (error id %s)", record_id, error_id, exc_info=error)
    kept = {
        "answer": storable_text(str(values.get("answer", ""))),
        "status": RecordStatus.INTERRUPTED,
        "error": with_error_id(KEPT_TEXT_ONLY, error_id),
    }
    try:
        await _finish(store.close_unsaved, record_id, kept)
    except Exception as again:
        if is_outage(again):
            close_later(store, record_id, kept)
        else:
            log.error("record %s: not even its text could be kept (error id %s)", record_id, error_id, exc_info=again)
    return RpcError(grpc.StatusCode.INTERNAL, with_error_id(NOT_SAVED_FAULT, error_id))


async def _finish(write: Write, record_id: int, values: dict[str, Any]) -> bool:
    """``write`` (``finish_record`` or ``close_unsaved``); when the database refuses the text
    itself, once more with every text made storable (the refusal is raised as it was when there
    is nothing to make storable)."""
    try:
        return await write(record_id, **values)
    except Exception as error:
        if not _refuses_text(error):
            raise
        storable = _storable(values)
        if storable == values:
            raise
        # The error's own text quotes the values: its type says enough.
        log.warning(
            "record %s: the database refused its text (%s); saving it made storable", record_id, type(error).__name__
        )
        return await write(record_id, **storable)


def _refuses_text(error: BaseException) -> bool:
    """Whether the database (or its driver) refused a value rather than the work: saving the
    same values again would fail the same way."""
    return isinstance(error, exc.DataError | UnicodeEncodeError)


def _storable(value: Any) -> Any:
    """``value`` with every string in it, however nested (the details' JSON), made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {key: _storable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value


def close_later(store: ChatStore, record_id: int, values: dict[str, Any]) -> None:
    """Close the unsaved record ``interrupted``, with the answer the client was shown, as soon
    as the database takes writes again (a full disk with space back): not left ``running``
    until the next sweep, a lease TTL later, nor left as a sweep that came first guessed."""
    task = asyncio.create_task(_close(store, record_id, values))
    _closing.add(task)
    task.add_done_callback(_closing.discard)


async def _close(store: ChatStore, record_id: int, values: dict[str, Any]) -> None:
    deadline = asyncio.get_running_loop().time() + CLOSE_FOR
    while asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(CLOSE_EVERY)
        try:
            await _finish(store.close_unsaved, record_id, values)  # a no-op once another closed it
            log.warning("record %s, not saved when it ended, is now closed as interrupted", record_id)
            return
        except Exception as error:
            if not is_outage(error):
                log.exception("could not close record %s", record_id)
                return
