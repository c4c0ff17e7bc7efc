"""A person's role changes, or the person is deleted, while their answer streams (docs/access.md,
People and roles: every call resolves its credentials afresh; Credentials are revocable: an
answer already streaming when its credential ends finishes).

An editor granted the demo application asks a question whose answer the model holds mid-stream
(a local OpenAI-protocol server, tests/fakes). Mid-answer an administrator demotes them to
viewer: the answer admitted finishes and is saved (``is_end``, the record ``answered``), and the
change ends the person's sessions: the next question is refused 401 with a sentence that says
why, and signed in again they are a viewer, refused 403 with a sentence. Likewise a person deleted mid-answer: the answer
ends, with its last chunk or an error event, its record is never left ``running``, and the
person's token is 401 on its next call.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ChatRecord, RecordStatus
from services.chat.accounts.user_tokens import SESSION_ROLE_CHANGED
from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, plausible_route
from tests.harness import Stack
from tests.sse_client import Frame, answer_text, ask, parse_frames
from tools.seed_demo import DEMO_APPLICATION_ID

PASSWORD = "in-flight-Password-1"
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
# The model sends the first piece, then holds the rest until the administrator's change is made
# (that the change landed mid-answer is still checked, not assumed).
SLOW_ANSWER = [f"第{i}段回答内容。" for i in range(1, 41)]
FIRST_WORDS, LAST_WORDS = SLOW_ANSWER[0].encode(), SLOW_ANSWER[-1].encode()
EDITOR_REFUSAL = "your account may not change this application: ask an administrator for editor access to it"
Sessions = async_sessionmaker[AsyncSession]


@dataclass
class InFlight:
    """A question being answered: its task, the bytes received so far, and the chat."""

    task: asyncio.Task[int]
    received: bytearray
    chat_id: str

    def frames(self) -> list[Frame]:
        return parse_frames(bytes(self.received))


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url.path}: {response.text}"
    return response.json()["data"]


async def editor_session(stack: Stack, username: str) -> tuple[str, str]:
    """A new editor of the demo application, signed in: (their id, their session token)."""
    async with stack.http() as operator, stack.http(anonymous=True) as anonymous:
        body = {"username": username, "password": PASSWORD, "role": "editor", "applications": [DEMO_APPLICATION_ID]}
        user_id = str(data(await operator.post("/api/user_manage", json=body))["id"])
        token = data(await anonymous.post("/api/user/login", json={"username": username, "password": PASSWORD}))
    return user_id, str(token)


async def start_asking(person: httpx.AsyncClient) -> InFlight:
    """The question sent; returns once the answer's first words have arrived and more are due."""
    chat_id = str(data(await person.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")))
    received = bytearray()

    async def read_answer() -> int:
        url = f"/api/application/chat_message/{chat_id}"
        async with person.stream("POST", url, json={"message": QUESTION, "progress": "named"}) as response:
            async for piece in response.aiter_bytes():
                received.extend(piece)
        return response.status_code

    task = asyncio.create_task(read_answer())

    def first_words_or_end() -> bool:
        assert task.done() or FIRST_WORDS in received, bytes(received)[-300:]
        return True

    await eventually(first_words_or_end, timeout=60, what="the answer's first words")
    assert not task.done(), f"the answer ended before the change: {bytes(received)[-300:]!r}"
    return InFlight(task, received, chat_id)


async def record_status(sessions: Sessions, chat_id: str) -> list[str]:
    async with sessions() as session:
        return list(await session.scalars(select(ChatRecord.status).where(ChatRecord.chat_id == chat_id)))


async def settled(sessions: Sessions, chat_id: str) -> list[str]:
    """The chat's record statuses once none is ``running`` (the saving may follow the last frame)."""

    def done(statuses: list[str]) -> bool:
        return bool(statuses) and RecordStatus.RUNNING not in statuses

    return await eventually(lambda: record_status(sessions, chat_id), done, timeout=30, what="the record settling")


def held_model(fake_model: FakeOpenAI) -> threading.Event:
    """The answer's first piece streams, the rest once the returned event is set."""
    release = threading.Event()
    fake_model.default = plausible_route(lambda: ChatReply.stream(SLOW_ANSWER, held_after=1, release=release))
    return release


async def test_an_editor_demoted_mid_answer_gets_the_whole_answer_saved_and_their_session_ends(
    remote_stack: Stack, fake_model: FakeOpenAI, sessions: Sessions, unique: str
) -> None:
    release = held_model(fake_model)
    username = f"demoted-{unique}"
    user_id, token = await editor_session(remote_stack, username)
    async with remote_stack.http(headers={"Authorization": f"Bearer {token}"}) as person:
        asking = await start_asking(person)
        async with remote_stack.http() as operator:
            demoted = data(await operator.put(f"/api/user_manage/{user_id}", json={"role": "viewer"}))
        assert demoted["role"] == "viewer"
        assert LAST_WORDS not in asking.received and not asking.task.done(), "demoted while the answer streamed"
        release.set()
        assert await asking.task == 200
        frames = asking.frames()
        assert frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True, frames[-3:]
        assert answer_text(frames) == "".join(SLOW_ANSWER), "the admitted answer finished, whole"
        assert not [f for f in frames if f.kind == "error"]
        ended, _ = await ask(person, asking.chat_id, "再问一个问题")
        assert ended.status_code == 401 and ended.json()["message"] == str(SESSION_ROLE_CHANGED), ended.text
    async with remote_stack.http(anonymous=True) as anonymous:
        again = data(await anonymous.post("/api/user/login", json={"username": username, "password": PASSWORD}))
    async with remote_stack.http(headers={"Authorization": f"Bearer {again}"}) as person:
        assert data(await person.get("/api/user"))["role"] == "viewer", "signed in again, with the new role"
        refused, _ = await ask(person, asking.chat_id, "再问一个问题")
        assert refused.status_code == 403 and refused.json()["message"] == EDITOR_REFUSAL, refused.text
        reopening = await person.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
        assert reopening.status_code == 403 and reopening.json()["message"] == EDITOR_REFUSAL
    assert await settled(sessions, asking.chat_id) == [RecordStatus.ANSWERED], "the refused question left no record"
    async with sessions() as session:
        saved = await session.scalar(select(ChatRecord.answer).where(ChatRecord.chat_id == asking.chat_id))
    assert saved == "".join(SLOW_ANSWER)


async def test_a_person_deleted_mid_answer_leaves_no_record_running_and_their_token_is_401(
    remote_stack: Stack, fake_model: FakeOpenAI, sessions: Sessions, unique: str
) -> None:
    release = held_model(fake_model)
    user_id, token = await editor_session(remote_stack, f"deleted-{unique}")
    async with remote_stack.http(headers={"Authorization": f"Bearer {token}"}) as person:
        asking = await start_asking(person)
        async with remote_stack.http() as operator:
            assert data(await operator.delete(f"/api/user_manage/{user_id}")) is True
        assert LAST_WORDS not in asking.received, "the deletion landed while the answer streamed"
        release.set()
        assert await asking.task == 200
        frames = asking.frames()
        ended = frames[-1].kind == "error" or (frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True)
        assert ended, f"the answer ended with its last chunk or an error event: {frames[-3:]}"
        again, _ = await ask(person, asking.chat_id, "再问一个问题")
        assert again.status_code == 401 and again.json()["message"], again.text
        assert (await person.get("/api/user")).status_code == 401
    statuses = await settled(sessions, asking.chat_id)
    assert len(statuses) == 1 and statuses[0] != RecordStatus.RUNNING
    if frames[-1].kind == "chunk":  # finished: then it was saved whole
        assert statuses == [RecordStatus.ANSWERED] and answer_text(frames) == "".join(SLOW_ANSWER)
