"""A chat lease whose holder this host proves dead is free at once, not when it expires.

A holder's name carries its process's identity (host key, pid, start time): a process that is
gone, or whose pid now belongs to a process started at another time, is dead; a live one, one
on another host and a name without an identity are never taken for dead. Taking the chat,
Stop and the sweep free a dead holder's lease and close its running record ``interrupted`` with
what was saved; the others keep the TTL rule. On SQLite, and on PostgreSQL with KB_DATABASE_URL.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.lease import INTERRUPTED_ERROR, ChatBusy, LeaseStore, holder_is_dead, new_holder
from kbcore.db.tables import Application, Chat, ChatLock, ChatRecord
from kbcore.process import process_identity
from kbcore.process.process_identity import ProcessIdentity
from kbcore.words.said import Said
from services.chat.store import ChatStore, NewQuestion
from tests.eventually import eventually_sync

Sessions = async_sessionmaker[AsyncSession]
REPO = Path(__file__).resolve().parents[2]
HOLDER_COLUMN = 64  # chat_lock.holder and chat_record.holder
PRINT_HOLDER = "from kbcore.db.lease import new_holder; print(new_holder('ask'), flush=True); input()"


@dataclasses.dataclass
class Child:
    """Another Python process on this host that named itself a lease holder and waits."""

    process: subprocess.Popen[str]
    holder: str

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)


def start_child() -> Child:
    process = subprocess.Popen(
        [sys.executable, "-c", PRINT_HOLDER], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return Child(process, process.stdout.readline().strip())


@pytest.fixture
def child() -> Iterator[Child]:
    started = start_child()
    yield started
    if started.process.poll() is None:
        started.kill()


def identity_of(holder: str) -> ProcessIdentity:
    parsed = process_identity.parse(holder.rpartition("@")[2])
    assert parsed is not None, holder
    return parsed


def named(identity: ProcessIdentity) -> str:
    return f"ask-{uuid.uuid4().hex[:12]}@{identity.text()}"


def other_host(identity: ProcessIdentity) -> ProcessIdentity:
    host = "0123456789abcdef" if identity.host != "0123456789abcdef" else "fedcba9876543210"
    return dataclasses.replace(identity, host=host)


def proc_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


# --- the identity ---------------------------------------------------------------------------


def test_a_holder_names_this_process_and_fits_its_column() -> None:
    me = process_identity.current()
    assert me is not None, "the tests run on Linux with /proc"
    holder = new_holder("compaction-of-a-long-purpose")
    assert len(holder) <= HOLDER_COLUMN
    assert identity_of(holder) == me and me.pid == int(Path("/proc/self").readlink().name)
    assert not holder_is_dead(holder), "this process is alive"
    assert new_holder("ask") != new_holder("ask"), "each taking of a lease has its own name"


def test_a_live_process_is_alive_and_a_killed_one_is_dead_zombie_or_reaped(child: Child) -> None:
    assert identity_of(child.holder).pid == child.process.pid
    assert not holder_is_dead(child.holder), "a live holder in another process"
    child.process.kill()  # not reaped yet: a zombie, which runs nothing
    eventually_sync(lambda: proc_state(child.process.pid), lambda state: state == "Z", what="the killed child a zombie")
    assert holder_is_dead(child.holder)
    child.process.wait(timeout=10)
    assert not Path(f"/proc/{child.process.pid}").exists()
    assert holder_is_dead(child.holder), "its pid is gone"


def test_a_pid_used_by_a_process_started_at_another_time_is_not_the_holder(child: Child) -> None:
    live = identity_of(child.holder)
    assert not holder_is_dead(named(live))
    assert holder_is_dead(named(dataclasses.replace(live, start=live.start - 1))), "the holder was an earlier pid"
    assert holder_is_dead(named(dataclasses.replace(live, start=live.start + 1)))


def test_another_hosts_holder_and_a_name_without_identity_are_never_judged_dead(child: Child) -> None:
    identity = identity_of(child.holder)
    child.kill()
    assert holder_is_dead(child.holder)
    assert not holder_is_dead(named(other_host(identity))), "another host's /proc is not ours to read"
    for name in ("ask-0123456789ab", "question-dead", f"ask-x@{identity.host}.{identity.pid}", "ask-x@nonsense"):
        assert not holder_is_dead(name), name


# --- the lease --------------------------------------------------------------------------------


async def running_question(sessions: Sessions, leases: LeaseStore, holder: str) -> tuple[str, int]:
    """A chat held by ``holder`` with its question running and part of its answer saved."""
    async with sessions.begin() as session:
        application = Application(name=f"dead-holder-{uuid.uuid4().hex[:6]}")
        session.add(application)
        await session.flush()
        chat = Chat(application_id=application.id)
        session.add(chat)
    record = (
        await ChatStore(sessions).begin_question(leases, NewQuestion(chat.id, "问题", holder, re_chat=False))
    ).record
    async with sessions.begin() as session:
        await session.execute(update(ChatRecord).where(ChatRecord.id == record.id).values(answer="部分回答"))
    return chat.id, record.id


async def record_state(sessions: Sessions, record_id: int) -> tuple[str, str, Said | None]:
    async with sessions() as session:
        row = await session.get(ChatRecord, record_id)
    assert row is not None
    return row.status, row.answer, row.error


async def lease_holder(sessions: Sessions, chat_id: str) -> str | None:
    async with sessions() as session:
        holder: str | None = await session.scalar(select(ChatLock.holder).where(ChatLock.chat_id == chat_id))
    return holder


async def expire(sessions: Sessions, chat_id: str) -> None:
    async with sessions.begin() as session:
        lock = await session.scalar(select(ChatLock).where(ChatLock.chat_id == chat_id))
        assert lock is not None
        lock.expires_at = lock.acquired_at.replace(year=2000)


async def test_a_live_holder_keeps_its_chat_and_a_dead_one_loses_it_at_once(sessions: Sessions, child: Child) -> None:
    leases = LeaseStore(sessions, ttl=30)
    chat_id, record_id = await running_question(sessions, leases, child.holder)
    successor = new_holder("ask")

    assert not await leases.try_acquire(chat_id, successor, "question"), "the holder in the other process lives"
    with pytest.raises(ChatBusy):
        await ChatStore(sessions).begin_question(leases, NewQuestion(chat_id, "又一问", successor, re_chat=False))
    assert await record_state(sessions, record_id) == ("running", "部分回答", None)

    child.kill()
    started = await ChatStore(sessions).begin_question(leases, NewQuestion(chat_id, "又一问", successor, re_chat=False))

    assert await lease_holder(sessions, chat_id) == successor, "taken over long before the 30 s TTL"
    assert await record_state(sessions, record_id) == ("interrupted", "部分回答", INTERRUPTED_ERROR)
    assert not await leases.renew(chat_id, child.holder), "the dead holder's name no longer holds anything"
    assert (started.record.status, started.first_in_chat) == ("running", False)


async def test_a_dead_compaction_holder_is_taken_over_by_hold(sessions: Sessions, child: Child) -> None:
    leases = LeaseStore(sessions, ttl=30)
    chat_id = str(uuid.uuid4())
    assert await leases.try_acquire(chat_id, child.holder, "compaction")
    child.kill()
    async with leases.hold(chat_id, new_holder("compact"), "compaction"):
        assert await lease_holder(sessions, chat_id) != child.holder


async def test_another_hosts_dead_holder_keeps_the_chat_until_its_lease_expires(
    sessions: Sessions, child: Child
) -> None:
    leases = LeaseStore(sessions, ttl=30)
    elsewhere = named(other_host(identity_of(child.holder)))
    child.kill()  # the pid is gone here, but on the other host it may be anyone's
    chat_id, record_id = await running_question(sessions, leases, elsewhere)

    assert not await leases.try_acquire(chat_id, new_holder("ask"), "question")
    assert await leases.request_stop(chat_id), "a stop is asked of it, as of any live holder"
    assert await record_state(sessions, record_id) == ("running", "部分回答", None)

    await expire(sessions, chat_id)
    assert await leases.try_acquire(chat_id, new_holder("ask"), "question"), "the TTL rule"


async def test_stop_frees_a_dead_holders_chat_and_asks_a_live_one(sessions: Sessions, child: Child) -> None:
    leases = LeaseStore(sessions, ttl=30)
    dead_chat, dead_record = await running_question(sessions, leases, child.holder)
    other = start_child()
    try:
        live_chat, live_record = await running_question(sessions, leases, other.holder)
        child.kill()

        assert not await leases.request_stop(dead_chat), "nothing was left running to stop"
        assert await leases.request_stop(live_chat)

        assert await lease_holder(sessions, dead_chat) is None, "free at once"
        assert await record_state(sessions, dead_record) == ("interrupted", "部分回答", INTERRUPTED_ERROR)
        assert await lease_holder(sessions, live_chat) == other.holder
        assert await leases.stop_requested(live_chat, other.holder)
        assert (await record_state(sessions, live_record))[0] == "running"
    finally:
        other.kill()


async def test_a_sweep_frees_the_dead_holders_on_this_host_and_no_others(sessions: Sessions, child: Child) -> None:
    leases = LeaseStore(sessions, ttl=30)
    other = start_child()
    try:
        elsewhere = named(other_host(identity_of(child.holder)))
        dead_chat, dead_record = await running_question(sessions, leases, child.holder)
        live_chat, live_record = await running_question(sessions, leases, other.holder)
        far_chat, far_record = await running_question(sessions, leases, elsewhere)
        child.kill()

        assert await ChatStore(sessions).sweep_interrupted() >= 1

        assert await lease_holder(sessions, dead_chat) is None
        assert await record_state(sessions, dead_record) == ("interrupted", "部分回答", INTERRUPTED_ERROR)
        assert (await lease_holder(sessions, live_chat), (await record_state(sessions, live_record))[0]) == (
            other.holder,
            "running",
        )
        assert (await lease_holder(sessions, far_chat), (await record_state(sessions, far_record))[0]) == (
            elsewhere,
            "running",
        )
    finally:
        other.kill()
