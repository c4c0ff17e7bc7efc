"""The local stack as processes (``python -m tools.stack --ephemeral``, the
``make run`` launcher) under kill -9. The retrieval service, then the chat service, then the
context service is killed mid-answer; for each:

(a) the client's last frame is ``event:error`` (503), never ``is_end`` for an unsaved answer;
(b) the record's final status is not ``running`` once the stack has recovered;
(c) the supervisor restarts the service and a question is answered again within 10 s of the
    kill, without a human.

The model is a local OpenAI-protocol server, so an answer can be held in the phase where the
kill lands: assessment (retrieval) stalls, generation streams slowly (chat), or the summary
of a long chat's older turns stalls (context: it compacts history over ``KB_CONTEXT_RECENT_TOKENS``).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.process_stack import StackProcesses, stack_processes
from tests.shared_tls import TLS
from tests.sse_client import Frame, ask

pytestmark = [pytest.mark.fault, pytest.mark.slow, pytest.mark.own_database]  # the stack's SQLite

LOCK_TTL = 5.0
RECOVERY_LIMIT = 10.0
STALL_ASSESS = "【评估时卡住】"
SLOW_ANSWER = "【慢慢回答】"
STALL_SUMMARY = "【总结时卡住】"
RECENT_TOKENS = 512
# Older turns long enough that six of them are over RECENT_TOKENS: the seventh question compacts.
PADDING = "请结合上面的资料详细说明探视和陪护的各项规定，" * 8
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
ANSWER_CHUNKS = ["ICU每天探视时间为16:00至16:30", "【云岭县人民医院住院患者探视与陪护管理规定】。"]


def respond(body: dict[str, Any]) -> ChatReply:
    kind = request_kind(body)
    text = json.dumps(body["messages"], ensure_ascii=False)
    if kind == "assess":
        verdict = ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []}))
        return dataclasses_replace(verdict, delay=8.0) if STALL_ASSESS in text else verdict
    if kind == "rewrite":
        return ChatReply(content=QUESTION)
    if kind == "summarize":
        summary = ChatReply(content="问：较早的问题｜答：较早的回答")
        return dataclasses_replace(summary, delay=8.0) if STALL_SUMMARY in text else summary
    if SLOW_ANSWER in str(body["messages"][-1]["content"]):
        return ChatReply.stream([f"第{i}段。" for i in range(40)], chunk_delay=0.25)
    return ChatReply.stream(ANSWER_CHUNKS)


def dataclasses_replace(reply: ChatReply, **changes: Any) -> ChatReply:
    import dataclasses

    return dataclasses.replace(reply, **changes)


@dataclass
class ProcessStack:
    processes: StackProcesses
    fake: FakeOpenAI

    @property
    def info(self) -> dict[str, Any]:
        return self.processes.info

    @property
    def app_id(self) -> str:
        """The demo application, under the random id ``make run`` drew for this data folder."""
        return str(self.info["application_id"])

    @property
    def url(self) -> str:
        return str(self.info["url"])

    def kill(self, name: str) -> float:
        """kill -9 the service now running as ``name``; the moment it died."""
        pid = int(self.info["pids"][name])
        os.kill(pid, signal.SIGKILL)
        return time.monotonic()

    def running_records(self) -> int:
        with sqlite3.connect(self.processes.data_dir / "kb.sqlite3") as db:
            return int(db.execute("SELECT count(*) FROM chat_record WHERE status = 'running'").fetchone()[0])

    def statuses(self, chat_id: str) -> list[str]:
        with sqlite3.connect(self.processes.data_dir / "kb.sqlite3") as db:
            rows = db.execute("SELECT status FROM chat_record WHERE chat_id = ? ORDER BY id", (chat_id,)).fetchall()
        return [str(row[0]) for row in rows]


@pytest.fixture(scope="module")
def process_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessStack]:
    with FakeOpenAI(default=respond) as fake:
        settings = {
            "KB_LOCK_TTL": str(LOCK_TTL),
            "KB_CONTEXT_RECENT_TOKENS": str(RECENT_TOKENS),
            "KB_MODEL_BASE_URL": fake.base_url,
            "KB_MODEL_API_KEY": "test-key",
            "KB_MODEL_CHAT": "fake-chat",
            "KB_LOG_LEVEL": "WARNING",
            "PYTHONUNBUFFERED": "1",
        }
        hospital = ["yunling_hospital_visiting_rules.md"]
        with stack_processes(tmp_path_factory.mktemp("fault-stack"), settings, documents=hospital) as processes:
            yield ProcessStack(processes, fake)


async def open_chat(client: httpx.AsyncClient, app_id: str) -> str:
    response = await client.get(f"/api/application/{app_id}/chat/open")
    assert response.status_code == 200, response.text
    return str(response.json()["data"])


async def answers_again(stack: ProcessStack, killed_at: float) -> float:
    """Seconds from the kill until a question on a new chat is answered in full."""
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, headers=stack.processes.operator_headers, timeout=15
    ) as client:

        async def answered_in_full() -> bool:
            try:
                response = await client.get(f"/api/application/{stack.app_id}/chat/open")
                if response.status_code != 200:
                    return False
                answered, frames = await ask(client, str(response.json()["data"]), QUESTION)
            except httpx.TransportError:
                return False
            return answered.status_code == 200 and bool(frames) and frames[-1].data.get("is_end") is True

        left = RECOVERY_LIMIT - (time.monotonic() - killed_at)
        await eventually(answered_in_full, timeout=left, interval=0.1, what="answering again within 10 s of the kill")
    return time.monotonic() - killed_at


def assert_error_last(frames: list[Frame]) -> None:
    assert frames, "the stream ended with no frame"
    assert not [f for f in frames if f.kind == "chunk" and f.data["is_end"]], "is_end for an unsaved answer"
    assert frames[-1].kind == "error", frames[-3:]
    assert frames[-1].data["code"] == 503, frames[-1].data


async def kill_mid_answer(
    stack: ProcessStack, name: str, marker: str, reached: Callable[[bytes], bool]
) -> tuple[list[Frame], str, float]:
    """Ask a question carrying ``marker``, kill ``name`` once ``reached(what the client has
    received so far)``; the frames, the chat and the moment of the kill."""
    received = bytearray()
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, headers=stack.processes.operator_headers, timeout=60
    ) as client:
        chat_id = await open_chat(client, stack.app_id)
        asking = asyncio.ensure_future(ask(client, chat_id, f"{QUESTION}{marker}", received=received))
        await eventually(lambda: reached(bytes(received)), timeout=60, what=f"the phase where {name} is killed")
        killed_at = stack.kill(name)
        response, frames = await asyncio.wait_for(asking, 30)
    assert response.status_code == 200
    return frames, chat_id, killed_at


def streamed_a_chunk(received: bytes) -> bool:
    """Whether a whole answer chunk frame (``data:{...}`` then a blank line) has reached the client."""
    return re.search(rb"(^|\n\n)data:[^\n]*\n\n", received) is not None


def summarizing(fake: FakeOpenAI) -> bool:
    return any(
        request_kind(b) == "summarize" and STALL_SUMMARY in json.dumps(b, ensure_ascii=False) for b in fake.chat_bodies
    )


def generating(fake: FakeOpenAI, marker: str) -> bool:
    return any(request_kind(b) == "generate" and marker in json.dumps(b, ensure_ascii=False) for b in fake.chat_bodies)


def assessing(fake: FakeOpenAI, marker: str) -> bool:
    return any(request_kind(b) == "assess" and marker in json.dumps(b, ensure_ascii=False) for b in fake.chat_bodies)


async def test_kill_9_of_retrieval_then_chat_mid_answer_ends_in_an_error_and_the_stack_recovers(
    process_stack: ProcessStack,
) -> None:
    """See the module docstring."""
    stack = process_stack
    figures: dict[str, float] = {}

    # Retrieval dies while it waits for the assessment: the chat service lives and saves the failure.
    frames, chat_id, killed_at = await kill_mid_answer(
        stack, "retrieval", STALL_ASSESS, lambda _: assessing(stack.fake, STALL_ASSESS)
    )
    assert_error_last(frames)
    assert stack.statuses(chat_id) == ["failed"]
    figures["retrieval"] = await answers_again(stack, killed_at)

    # Chat dies mid-generation, with chunks already streamed: nothing can save them, the client
    # must not be told the answer ended, and the record is closed once the dead lease expires.
    stack.fake.reset()
    frames, chat_id, killed_at = await kill_mid_answer(
        stack, "chat", SLOW_ANSWER, lambda received: generating(stack.fake, SLOW_ANSWER) and streamed_a_chunk(received)
    )
    assert_error_last(frames)
    assert [f for f in frames if f.kind == "chunk"], "the kill came mid-answer, after chunks were streamed"
    figures["chat"] = await answers_again(stack, killed_at)
    await eventually(stack.running_records, lambda running: running == 0, timeout=3 * LOCK_TTL, interval=0.1)
    assert stack.statuses(chat_id) == ["interrupted"]
    assert stack.running_records() == 0, "records left running after recovery"
    closed_after = time.monotonic() - killed_at

    restarts = stack.info["restarts"]
    assert restarts["retrieval"] >= 1 and restarts["chat"] >= 1, restarts
    log = stack.processes.log.read_text(errors="replace")
    assert "retrieval (pid" in log and "restarting it in" in log and "chat restarted" in log
    print(
        f"\nD2: kill -9 → answering again: retrieval {figures['retrieval']:.2f} s, chat {figures['chat']:.2f} s; "
        f"killed chat's record interrupted {closed_after:.1f} s after the kill (lease TTL {LOCK_TTL:g} s); "
        f"0 records running, 0 is_end for unsaved answers"
    )


async def long_chat(stack: ProcessStack) -> str:
    """A chat with six answered turns over the context budget, the first carrying STALL_SUMMARY."""
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, headers=stack.processes.operator_headers, timeout=60
    ) as client:
        chat_id = await open_chat(client, stack.app_id)
        for turn in range(6):
            marker = STALL_SUMMARY if turn == 0 else ""
            response, frames = await ask(client, chat_id, f"{QUESTION}{marker}{PADDING}{turn}")
            assert response.status_code == 200 and frames[-1].data.get("is_end") is True, frames[-3:]
    return chat_id


async def test_kill_9_of_context_mid_answer_ends_in_an_error_and_the_stack_recovers(
    process_stack: ProcessStack,
) -> None:
    """The context service killed while it compacts a long chat's history (the summary
    call stalls), the answer ends in ``event:error`` 503, its record is closed, and the
    supervisor has the stack answering again within 10 s."""
    stack = process_stack
    stack.fake.reset()
    chat_id = await long_chat(stack)
    assert not summarizing(stack.fake), "six turns must not compact yet"
    async with httpx.AsyncClient(
        verify=TLS, base_url=stack.url, headers=stack.processes.operator_headers, timeout=60
    ) as client:
        asking = asyncio.ensure_future(ask(client, chat_id, QUESTION))
        await eventually(
            lambda: summarizing(stack.fake), timeout=60, what="the seventh question compacting the history"
        )
        killed_at = stack.kill("context")
        response, frames = await asyncio.wait_for(asking, 30)
    assert response.status_code == 200
    assert_error_last(frames)
    recovered = await answers_again(stack, killed_at)
    await eventually(stack.running_records, lambda running: running == 0, timeout=3 * LOCK_TTL, interval=0.1)
    statuses = stack.statuses(chat_id)
    assert len(statuses) == 7 and statuses[-1] != "running", statuses
    assert stack.running_records() == 0, "records left running after recovery"
    assert stack.info["restarts"]["context"] >= 1, stack.info["restarts"]
    assert "context (pid" in stack.processes.log.read_text(errors="replace")
    print(f"\nD2: kill -9 of context → answering again after {recovered:.2f} s; its record {statuses[-1]}")
