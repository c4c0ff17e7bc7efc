"""The SQLite disk fills up mid-answer. The client must get
``event:error`` (507, the disk is full, in words) and never ``is_end``; once space is back no
record is left ``running`` and the next question on the chat is answered.

The disk is real where the machine allows it: the database lives on a small tmpfs (``mount -t
tmpfs``, as root) which the test fills with a file as soon as the answer starts, and empties
once the client has its error. Where mounting is refused, the record's write fails instead as
SQLite's own full-disk error, injected (``sqlite3.OperationalError: database or disk is full``);
the test prints which it used. The lease has its default TTL: the record must be closed and the
chat free within a few seconds of space coming back (before: the lease release and the record's
close failed on the full disk too, so the chat answered 409 until the lease expired, 30 s, and
the record read ``running`` until the next sweep). Only the database is on the tmpfs here; the
vector store on a full disk is ``test_store_disk_full.py``'s.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from kbcore.db.tables import ChatRecord
from services.chat.answering.saving import NOT_SAVED_DISK_FULL
from services.chat.store import ChatStore
from tests.e2e.private_stack import Seeded, private_stack
from tests.full_disk import fill, mount_tmpfs, unmount
from tests.sse_client import Frame, answer_text, parse_frames

pytestmark = [pytest.mark.fault, pytest.mark.own_database]  # SQLite on a small tmpfs

QUESTION = "重症医学科每天的探视时间是几点？"
# The default TTL: recovery must not wait for the lease to expire or for the sweep.
LOCK_TTL = 30.0
RECOVERY = 5.0


class InjectedFullDisk:
    """The record's write fails as SQLite's full-disk error while ``full`` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.full = False
        original = ChatStore.finish_record

        async def finish_record(store: ChatStore, record_id: int, **values: Any) -> bool:
            if self.full:
                raise OperationalError("UPDATE chat_record", {}, sqlite3.OperationalError("database or disk is full"))
            return await original(store, record_id, **values)

        monkeypatch.setattr(ChatStore, "finish_record", finish_record)


@pytest.fixture
async def disk_stack(tmp_path: Path, embedder, offline_model) -> AsyncIterator[tuple[Seeded, Path | None]]:
    disk = tmp_path / "disk"
    mounted = mount_tmpfs(disk)
    try:
        database = disk / "kb.sqlite3" if mounted else None
        async with private_stack(
            tmp_path / "data", embedder=embedder, model=offline_model, database=database, lock_ttl=LOCK_TTL
        ) as seeded:
            yield seeded, disk if mounted else None
    finally:
        if mounted:
            unmount(disk)


async def ask_and_fill(client: Any, chat_id: str, when_started: Any) -> list[Frame]:
    """Ask; on the first frame back, run ``when_started`` (fill the disk) and read the rest."""
    body = b""
    asked = {"message": QUESTION, "progress": "named"}
    async with client.stream("POST", f"/api/application/chat_message/{chat_id}", json=asked) as r:
        assert r.status_code == 200, await r.aread()
        async for piece in r.aiter_bytes():
            if not body:
                await asyncio.to_thread(when_started)
            body += piece
    return parse_frames(body)


async def record_statuses(seeded: Seeded, chat_id: str) -> list[str]:
    async with seeded.sessions() as session:
        rows = (
            await session.execute(
                select(ChatRecord.status).where(ChatRecord.chat_id == chat_id).order_by(ChatRecord.id)
            )
        ).all()
    return [r.status for r in rows]


async def running_records(seeded: Seeded, chat_id: str) -> list[str]:
    async with seeded.sessions() as session:
        rows = (await session.execute(select(ChatRecord.status).where(ChatRecord.chat_id == chat_id))).all()
    return [r.status for r in rows if r.status == "running"]


async def test_a_disk_full_mid_answer_ends_with_an_error_and_the_chat_recovers(
    disk_stack: tuple[Seeded, Path | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded, disk = disk_stack
    injected = None if disk else InjectedFullDisk(monkeypatch)
    filler: list[Path] = []

    def disk_fills() -> None:
        if disk is not None:
            filler.append(fill(disk))
        else:
            injected.full = True  # type: ignore[union-attr]

    async with seeded.stack.http() as client:
        chat_id = str((await client.get(f"/api/application/{seeded.app_id}/chat/open")).json()["data"])
        frames = await ask_and_fill(client, chat_id, disk_fills)
        assert not any(f.kind == "chunk" and f.data["is_end"] for f in frames), "is_end for an answer not saved"
        assert frames[-1].kind == "error", [f.raw for f in frames[-3:]]
        assert frames[-1].data["code"] == 507, frames[-1].data  # Insufficient Storage, not a generic 503
        assert frames[-1].data["message"] == str(NOT_SAVED_DISK_FULL), frames[-1].data
        assert "sqlite" not in frames[-1].raw.decode().lower()

        for path in filler:  # space is back
            path.unlink()
        if injected is not None:
            injected.full = False
        back = time.monotonic()
        while await running_records(seeded, chat_id) and time.monotonic() < back + RECOVERY:
            await asyncio.sleep(0.2)
        assert not await running_records(seeded, chat_id), "a record left running once space was back"
        settled = time.monotonic() - back
        saved = (await client.get(f"/api/application/{seeded.app_id}/chat/{chat_id}/chat_record/1")).json()["data"]
        assert saved["answer_text"] == answer_text(frames), "the record keeps the answer the client was shown"

        again = await client.post(f"/api/application/chat_message/{chat_id}", json={"message": QUESTION})
        assert again.status_code == 200, f"the chat is still busy {settled:.1f} s after space was back: {again.text}"
        assert parse_frames(again.content)[-1].data.get("is_end") is True
        assert await record_statuses(seeded, chat_id) == ["interrupted", "answered"]
    method = "a real 8 MiB tmpfs, filled" if disk else "an injected 'database or disk is full'"
    print(
        f"\ndisk full ({method}): event:error {frames[-1].data['code']}, 0 is_end; 0 running {settled:.1f} s "
        "after space was back; the record reads interrupted and the next question is answered"
    )
