"""The fault suite, against the in-process stack over HTTP: an answer is announced
ended only once it is saved, and a client that leaves at once leaves no ``running`` record.
The process-level faults (kill -9, the supervisor) are in test_fault_processes.py.

Each test prints what the issue asks to measure: records left ``running`` and answers announced
ended but not saved (both must be 0).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, OperationalError

from kbcore.db.lease import INTERRUPTED_ERROR
from kbcore.db.tables import ChatLock, ChatRecord
from kbcore.error_ids import with_error_id
from services.chat.answering.saving import KEPT_TEXT_ONLY, NOT_SAVED, NOT_SAVED_FAULT
from services.chat.store import ChatStore
from tests.eventually import eventually
from tests.harness import Stack
from tests.sse_client import Frame, answer_text, ask
from tools.seed_demo import DEMO_APPLICATION_ID

pytestmark = pytest.mark.fault

EARLY_LEAVERS = 20
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
# What a refused PostgreSQL connection says: host, port and statement, never for a client.
REFUSED = 'connection to server at "db.internal" (10.0.0.5), port 5432 failed: Connection refused'
# What the database says of a write it refuses for good (a constraint, a value out of range).
VIOLATED = 'new row for relation "chat_record" violates check constraint "chat_record_answer_check"'
ERROR_ID = re.compile(r"\(error id ([0-9a-f]{12})\)")


class FailingSaves:
    """ChatStore.finish_record that fails like a refused database connection ``failures`` times,
    then saves as usual: the injected write failure."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = ChatStore.finish_record

        async def finish_record(store: ChatStore, record_id: int, **values: Any) -> bool:
            self.calls += 1
            if self.calls <= self.failures:
                raise OperationalError("UPDATE chat_record SET answer=%(answer)s", {}, ConnectionRefusedError(REFUSED))
            return await original(store, record_id, **values)

        monkeypatch.setattr(ChatStore, "finish_record", finish_record)


async def open_chat(client: Any) -> str:
    response = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
    assert response.status_code == 200, response.text
    return str(response.json()["data"])


async def statuses(client: Any, chat_id: str) -> list[str]:
    response = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/20")
    assert response.status_code == 200, response.text
    return [r["status"] for r in response.json()["data"]["records"]]


def ended(frames: list[Frame]) -> bool:
    return any(f.kind == "chunk" and f.data["is_end"] for f in frames)


async def test_a_save_that_fails_briefly_is_retried_and_the_answer_ends_saved(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two refused writes of the record, then the database is back: the retry saves the
    answer, and only then is ``is_end`` sent (before: the error was swallowed, ``is_end`` went
    out and the record stayed ``running`` with no answer)."""
    saves = FailingSaves(2)
    saves.install(monkeypatch)
    async with stack.http() as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200
        assert frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True, frames[-3:]
        assert not [f for f in frames if f.kind == "error"]
        assert saves.calls == 3
        records = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/20")).json()[
            "data"
        ]["records"]
        assert [r["status"] for r in records] == ["answered"]
        assert records[0]["answer_text"] == answer_text(frames), "what the client was shown is what was saved"


async def test_an_answer_that_cannot_be_saved_ends_with_an_error_instead_of_is_end(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database refuses every write of the record: the client's last frame is
    ``event:error`` 503 and no ``is_end`` was sent at all (before: ``is_end``, then the record
    stayed ``running`` with an empty answer). The lease is released all the same, so once the
    database is back the chat answers again and the unsaved record reads ``interrupted``."""
    saves = FailingSaves(10**6)
    saves.install(monkeypatch)
    async with stack.http() as client:
        chat_id = await open_chat(client)
        started = time.monotonic()
        response, frames = await ask(client, chat_id, QUESTION)
        took = time.monotonic() - started
        assert response.status_code == 200
        assert not ended(frames), "is_end announced for an answer that was not saved"
        assert frames[-1].kind == "error", frames[-3:]
        assert frames[-1].data["code"] == 503, frames[-1].data
        assert "could not be saved" in frames[-1].data["message"]
        # The error id is random hex, which can spell 5432 by chance: only the words are checked.
        words = re.sub(r"error id [0-9a-f]+", "error id", frames[-1].raw.decode())
        assert "5432" not in words and "db.internal" not in words
        assert 4 <= saves.calls <= 6, f"a few attempts, not {saves.calls}"
        monkeypatch.undo()  # the database is back

        again, frames = await ask(client, chat_id, QUESTION)
        assert again.status_code == 200, "the chat is not left busy"
        assert ended(frames)
        assert await statuses(client, chat_id) == ["interrupted", "answered"]
    print(f"\nD1: unsaved answer refused after {saves.calls} attempts in {took:.2f} s; 0 is_end for unsaved answers")


async def _leave_early(url: str, token: str, chat_id: str, wait_for_first_bytes: bool) -> None:
    """POST a question over a raw socket, presenting ``token``, and close it at once, or on the
    first bytes back."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    body = json.dumps({"message": QUESTION}, ensure_ascii=False).encode()
    head = (
        f"POST /api/application/chat_message/{chat_id} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    if wait_for_first_bytes:
        await asyncio.wait_for(reader.read(1), 30)
    writer.transport.abort()  # no FIN handshake: the socket is simply gone


async def test_clients_that_leave_right_after_the_post_leave_no_running_record(stack: Stack, sessions: Any) -> None:
    """20 clients at once close their socket right after the POST (half before any byte
    comes back, half on the first one). Once the dust settles no record is ``running`` and no
    lease is left: each answer either completed and was saved, or was saved ``stopped``
    (before: some stayed ``running`` with no lease, for good)."""
    async with stack.http() as client:
        chats = [await open_chat(client) for _ in range(EARLY_LEAVERS)]
    token = stack.operator_token
    await asyncio.gather(*(_leave_early(stack.url, token, c, i % 2 == 1) for i, c in enumerate(chats)))

    deadline = time.monotonic() + 20
    while True:
        async with sessions() as session:
            rows = (await session.execute(select(ChatRecord.status).where(ChatRecord.chat_id.in_(chats)))).all()
            leases = (await session.execute(select(ChatLock.chat_id).where(ChatLock.chat_id.in_(chats)))).all()
        running = [r for r in rows if r.status == "running"]
        if (not running and not leases) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    found = sorted(r.status for r in rows)
    assert not running, f"{len(running)} record(s) left running: {found}"
    assert not leases, f"{len(leases)} lease(s) left behind"
    assert set(found) <= {"answered", "stopped"}, found
    assert len(found) >= EARLY_LEAVERS // 2, f"the questions must have started: {found}"
    print(
        f"\nD7: {EARLY_LEAVERS} early disconnects → {found.count('answered')} answered, {found.count('stopped')} stopped, 0 running"
    )


async def record_of(sessions: Any, chat_id: str) -> ChatRecord:
    async with sessions() as session:
        record: ChatRecord = (
            await session.execute(select(ChatRecord).where(ChatRecord.chat_id == chat_id))
        ).scalar_one()
    return record


async def test_a_save_refused_for_good_keeps_the_answers_text_and_tells_the_client_it_was_not_saved(
    stack: Stack, sessions: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The database refuses the outcome for good (not an outage: retrying would fail alike): the
    client's last frame is ``event:error`` 500 with an error id, never ``is_end``; the record
    keeps the answer's text and says saving failed, with the same id, rather than staying
    ``running`` until a sweep closed it "the process answering it stopped" with the answer lost
    (it did not stop); the log has the id with the database's words; the chat answers again."""
    caplog.set_level(logging.INFO)
    writes = 0

    async def refused(store: ChatStore, record_id: int, **values: Any) -> bool:
        nonlocal writes
        writes += 1
        raise IntegrityError("UPDATE chat_record SET answer=%(answer)s", {}, Exception(VIOLATED))

    monkeypatch.setattr(ChatStore, "finish_record", refused)
    async with stack.http() as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200
        assert not ended(frames), "is_end announced for an answer that was not saved"
        failed = frames[-1]
        assert failed.kind == "error" and failed.data["code"] == 500, frames[-3:]
        assert failed.data["message"].startswith(f"{NOT_SAVED_FAULT} (error id "), failed.data
        assert "constraint" not in failed.raw.decode() and "UPDATE" not in failed.raw.decode()
        assert writes == 1, "a refusal for good is not retried"
        shown = answer_text(frames)
        assert shown, "the answer streamed before the save"
        [id_told] = ERROR_ID.findall(failed.data["message"])

        record = await record_of(sessions, chat_id)
        assert record.status == "interrupted" and record.answer == shown, (record.status, record.answer)
        assert record.error == with_error_id(KEPT_TEXT_ONLY, id_told), record.error
        assert record.error != INTERRUPTED_ERROR
        logged = [r.exc_info[1] for r in caplog.records if id_told in r.getMessage() and r.exc_info]
        assert logged and VIOLATED in str(logged[0]), "the log has the id with the database's words"

        await ChatStore(sessions).sweep_interrupted()  # a later sweep leaves the truth alone
        assert (await record_of(sessions, chat_id)).error == record.error
        monkeypatch.undo()
        again, frames = await ask(client, chat_id, QUESTION)
        assert again.status_code == 200 and ended(frames), "the chat is not left busy"


async def test_an_answer_unsaved_through_an_outage_is_closed_with_its_text_over_a_sweeps_guess(
    stack: Stack, sessions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write of the record fails as an outage, long enough for a sweep to close the record
    first on the guess that its process died ("the process answering it stopped", no answer).
    When the database takes writes again the living process closes it with what really
    happened and the answer the client was shown (before: the sweep's guess stood)."""
    outage = FailingSaves(10**6)
    outage.install(monkeypatch)
    original_close = ChatStore.close_unsaved

    async def close_unsaved(store: ChatStore, record_id: int, **values: Any) -> bool:
        if outage.failures:
            raise OperationalError("UPDATE chat_record", {}, ConnectionRefusedError(REFUSED))
        return await original_close(store, record_id, **values)

    monkeypatch.setattr(ChatStore, "close_unsaved", close_unsaved)
    async with stack.http() as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200 and not ended(frames)
        assert frames[-1].kind == "error" and frames[-1].data["code"] == 503, frames[-1].data
        [id_told] = ERROR_ID.findall(frames[-1].data["message"])
        shown = answer_text(frames)

    assert await ChatStore(sessions).sweep_interrupted() >= 1, "the sweep closes it on its guess"
    guessed = await record_of(sessions, chat_id)
    assert (guessed.status, guessed.error, guessed.answer) == ("interrupted", INTERRUPTED_ERROR, "")
    outage.failures = 0  # the database is back

    async def closed_truthfully() -> bool:
        record = await record_of(sessions, chat_id)
        return record.error != INTERRUPTED_ERROR

    await eventually(closed_truthfully, timeout=15, what="the unsaved answer closed by its process")
    record = await record_of(sessions, chat_id)
    assert record.status == "interrupted" and record.answer == shown, (record.status, record.answer)
    assert record.error == with_error_id(NOT_SAVED, id_told), record.error
