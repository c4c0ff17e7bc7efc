"""The chat lease across processes on one PostgreSQL database.

Two chat-service processes share one database; each has its own gateway, so a question sent
through gateway A can only reach chat process A and one sent through B only process B:

* 20 simultaneous questions on one chat, 10 through each gateway: exactly one runs (200, a
  complete stream), 19 get 409 with the readable envelope message, from both processes;
  once the answer has ended the next question runs.
* A holder SIGKILLed mid-answer on this host is provably dead (its name carries its pid and
  start time): a question through the surviving process is answered at once, a Stop frees the
  chat at once, and a chat service started after the kill finds the killed one's chats free and
  their records ``interrupted``, all long before the lease would expire (KB_LOCK_TTL at its
  default 30 s). A live holder in another process keeps its chat busy.
* A holder SIGKILLed in another pid namespace (``unshare``: another container, as far as
  ``/proc`` can tell) cannot be proven dead: a question through the other process still gets
  409 until the lease expires (KB_LOCK_TTL=5), then runs, and the killed answer's record reads
  ``interrupted``.

The model is a local OpenAI-protocol server (tests/fakes) so an answer can be kept running
(slow stream) or stalled (hang). The test needs PostgreSQL: ``KB_DATABASE_URL`` when it is a
PostgreSQL URL, else the local test database, else it is skipped; in the SQLite pass of `make
test` with KB_TEST_DATABASE_URL set, the PostgreSQL pass runs it and this one skips it. Each
test starts its own chat services and gateways and its own model server for their answers (the
tests kill chat processes), so they run alone or in any order; the context and retrieval
services they call, and the demo application they ask in, are started and seeded once for the
module (with the three sample documents the questions are about), since no test stops them and
their model calls (rewrites, assessments) are no test's subject.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from sqlalchemy import Engine, create_engine, select
from sqlalchemy.engine import make_url

from kbcore.db.engine import create_engine as create_async_db_engine
from kbcore.db.engine import session_factory, sync_url
from kbcore.db.lease import LeaseStore, new_holder
from kbcore.db.migrate import upgrade
from kbcore.db.tables import ChatLock, ChatRecord, utcnow
from kbcore.rpc.caller_token import operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.settings import Settings
from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import READS_ENGLISH
from tests.process_stack import child_pids, sample_documents
from tests.shared_tls import TLS
from tests.sse_client import Frame, answer_text, ask
from tools.seed_demo import DEMO_APPLICATION_ID, FIXED_DEMO_IDS, seed_demo

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
LOCK_TTL = 5.0
DEFAULT_LOCK_TTL = Settings().lock_ttl  # what a deployment that sets nothing gets: 30 s
START_TIMEOUT = 120.0
# Its own pid namespace (and a /proc for it): a process there is, to /proc, on another host.
OTHER_PID_NAMESPACE = ("unshare", "--pid", "--fork", "--mount-proc", "--kill-child")
BUSY_MESSAGE = "this chat is already answering a question or being compacted; wait for it to finish or stop it"

ANSWER_CHUNKS = [f"第{i}段回答。" for i in range(1, 11)]
CHUNK_DELAY = 0.25  # 10 chunks: the answer holds the lease for at least 2.5 s
HANG_MARKER = "【此问题的回答会卡住】"
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
FOLLOW_UP = "县图书馆成人读者证的借期是多少天？"
HANG_QUESTION = f"城乡居民医保参保人在县级定点医院住院，报销比例是多少？{HANG_MARKER}"
# What QUESTION, FOLLOW_UP and HANG_QUESTION are about: all the demo dataset needs to hold.
SEEDED_DOCUMENTS = (
    "yunling_hospital_visiting_rules.md",
    "yunling_library_rules.md",
    "yunling_resident_medical_insurance.md",
)


def respond(body: dict[str, Any]) -> ChatReply:
    """Plausible answers to every model job; the generation of HANG_QUESTION stalls mid-answer."""
    kind = request_kind(body)
    if kind == "assess":
        return ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []}, ensure_ascii=False))
    if kind == "rewrite":
        return ChatReply(content=FOLLOW_UP)
    if kind == "summarize":
        return ChatReply(content="问：较早的问题｜答：较早的回答")
    if HANG_MARKER in str(body["messages"][-1]["content"]):  # only the current question, not the history
        return ChatReply.hang(["部分回答"])
    return ChatReply.stream(ANSWER_CHUNKS, chunk_delay=CHUNK_DELAY)


# --- PostgreSQL ---------------------------------------------------------------------------


def _answers(url: str) -> str:
    """'' when PostgreSQL at ``url`` accepts a connection, else why not."""
    engine = create_engine(sync_url(url), connect_args={"connect_timeout": 3})
    try:
        with engine.connect():
            return ""
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def postgres_url(request: pytest.FixtureRequest) -> str:
    configured = os.environ.get("KB_DATABASE_URL", "")
    if configured and make_url(configured).get_backend_name() == "postgresql":
        # The session fixture resets and migrates this database; asking for it here makes that
        # happen before our processes use it, never in the middle. Our chats are fresh.
        url: str = request.getfixturevalue("database_url")
        return url
    if os.environ.get("KB_TEST_DATABASE_URL"):
        # `make test`'s PostgreSQL pass runs these on that database; here they would only run again.
        pytest.skip("runs in the PostgreSQL pass of `make test` (KB_TEST_DATABASE_URL is set)")
    problem = _answers(LOCAL_POSTGRES)
    if problem:
        pytest.skip(
            f"needs PostgreSQL: KB_DATABASE_URL is not a postgresql URL and {LOCAL_POSTGRES} does not answer ({problem})"
        )
    upgrade(LOCAL_POSTGRES)  # nothing else in a SQLite session uses it; migrate, never drop
    return LOCAL_POSTGRES


@pytest.fixture(scope="module")
def db(postgres_url: str) -> Iterator[Engine]:
    """Read-only access for the test: the lease rows and records as the services wrote them."""
    engine = create_engine(sync_url(postgres_url))
    yield engine
    engine.dispose()


def lease_row(engine: Engine, chat_id: str) -> tuple[str, dt.datetime] | None:
    """(holder, expires at) of the chat's lease row, if there is one."""
    with engine.connect() as connection:
        row = connection.execute(
            select(ChatLock.holder, ChatLock.expires_at).where(ChatLock.chat_id == chat_id)
        ).first()
    return None if row is None else (str(row.holder), row.expires_at)


def record_rows(engine: Engine, chat_id: str) -> list[tuple[int, str, str, dt.datetime]]:
    """(id, status, lease holder, created at) of every record of the chat, oldest first."""
    with engine.connect() as connection:
        rows = connection.execute(
            select(ChatRecord.id, ChatRecord.status, ChatRecord.holder, ChatRecord.created_at)
            .where(ChatRecord.chat_id == chat_id)
            .order_by(ChatRecord.id)
        ).all()
    return [(int(r.id), str(r.status), str(r.holder), r.created_at) for r in rows]


# --- the processes ------------------------------------------------------------------------


@dataclass
class Service:
    label: str  # unique per process: "chat-a", "gateway-b", …
    name: str  # the name it announces its port under: "chat", "gateway", …
    process: subprocess.Popen[bytes]
    run_dir: Path
    log: Path
    port: int = 0
    wrapped: bool = False  # started by a wrapper (OTHER_PID_NAMESPACE) that does not pass signals on

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Processes:
    root: Path
    env: dict[str, str]
    services: dict[str, Service] = field(default_factory=dict)
    killed: set[str] = field(default_factory=set)
    upstream: Processes | None = None  # the module's context and retrieval: logged, never stopped here

    def __getitem__(self, label: str) -> Service:
        if label not in self.services and self.upstream is not None:
            return self.upstream[label]
        return self.services[label]

    def start(self, label: str, module: str, name: str, extra: dict[str, str], wrapper: Sequence[str] = ()) -> Service:
        run_dir = self.root / "run" / label  # one per process: both chat services announce "chat.port"
        run_dir.mkdir(parents=True)
        log = self.root / f"{label}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [*wrapper, sys.executable, "-m", module],
                cwd=REPO,
                env={**self.env, "KB_RUN_DIR": str(run_dir), **extra},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        service = Service(label, name, process, run_dir, log, wrapped=bool(wrapper))
        self.services[label] = service
        return service

    def logs(self) -> str:
        parts = [self.upstream.logs()] if self.upstream is not None else []
        for service in self.services.values():
            text = service.log.read_text(errors="replace") if service.log.exists() else ""
            parts.append(
                f"--- {service.label} (pid {service.process.pid}, exit {service.process.poll()}) ---\n{text[-4000:]}"
            )
        return "\n".join(parts)

    async def wait_port(self, service: Service) -> int:
        target = service.run_dir / f"{service.name}.port"

        def announced() -> bool:
            if service.process.poll() is not None:
                pytest.fail(f"{service.label} exited while starting:\n{self.logs()}")
            return target.exists()

        await self.starting(announced, f"{service.label} announcing its port")
        service.port = int(target.read_text())
        return service.port

    async def wait_serving(self, service: Service) -> None:
        await self.wait_port(service)
        channel = open_channel(service.target, service_credential(Settings.from_env(self.env)))
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=START_TIMEOUT, wait_for_ready=True
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, f"{service.label}: {reply.status}"
        finally:
            await channel.close()

    async def wait_http(self, service: Service) -> None:
        """The gateway announces its port before uvicorn listens: poll a cheap route through to chat."""
        await self.wait_port(service)
        async with httpx.AsyncClient(
            verify=TLS, base_url=service.url, headers=self.operator_headers(), timeout=5
        ) as client:

            async def answers() -> bool:
                if service.process.poll() is not None:
                    pytest.fail(f"{service.label} exited while starting:\n{self.logs()}")
                try:
                    return (await client.get(f"/api/application/{DEMO_APPLICATION_ID}")).status_code == 200
                except httpx.TransportError:
                    return False

            await self.starting(answers, f"{service.label} answering")

    def operator_headers(self) -> dict[str, str]:
        """What a client presents to be the operator (a loopback caller without it is nobody)."""
        return {"Authorization": f"Bearer {operator_token(Settings.from_env(self.env))}", **READS_ENGLISH}

    async def starting(self, ready: Callable[[], bool | Awaitable[bool]], what: str) -> None:
        """Wait for a starting process to be ``ready``; on timeout, fail with every process's log."""
        try:
            await eventually(ready, timeout=START_TIMEOUT, interval=0.05, what=what)
        except AssertionError as late:
            raise AssertionError(f"{late}:\n{self.logs()}") from None

    def kill(self, label: str) -> None:
        """SIGKILL one process, the way a crash or an OOM kill ends it: no cleanup runs."""
        service = self.services[label]
        service.process.send_signal(signal.SIGKILL)
        service.process.wait(timeout=10)
        self.killed.add(label)

    def stop(self) -> None:
        """SIGTERM everything (gateways first), then kill what is left; nothing outlives the test."""
        running = [s for s in reversed(self.services.values()) if s.process.poll() is None]
        for service in running:
            for pid in child_pids(service.process.pid) if service.wrapped else [service.process.pid]:
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for service in running:
            try:
                service.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                service.process.kill()
                service.process.wait(timeout=10)


def other_pid_namespace_works() -> bool:
    """Whether this machine lets us start a process in a pid namespace of its own (root, or a
    user namespace): what the test of a holder that /proc cannot judge needs."""
    if shutil.which("unshare") is None:
        return False
    return subprocess.run([*OTHER_PID_NAMESPACE, "true"], capture_output=True, timeout=30).returncode == 0


@dataclass
class LeaseStack:
    processes: Processes
    fake: FakeOpenAI
    db: Engine

    def __getitem__(self, label: str) -> Service:
        return self.processes[label]

    def http(self, label: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            verify=TLS, base_url=self[label].url, headers=self.processes.operator_headers(), timeout=60
        )


def service_env(data_dir: Path, postgres_url: str, model: FakeOpenAI) -> dict[str, str]:
    """The environment of every process: one data folder (the local operator and service
    tokens, the retrieval service's own embedded vector store), the database, the model."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    return {
        **base,
        "KB_DATA_DIR": str(data_dir),
        "KB_DATABASE_URL": postgres_url,
        "KB_MODEL_BASE_URL": model.base_url,
        "KB_MODEL_API_KEY": "test-key",
        "KB_MODEL_CHAT": "fake-chat",
        "KB_MODEL_DISABLE_THINKING": "true",
        "KB_LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }


def assert_stopped_cleanly(processes: Processes) -> None:
    """Every process of ``processes`` is gone, and each not killed on purpose exited 0 on SIGTERM."""
    codes = {s.label: s.process.poll() for s in processes.services.values()}
    assert None not in codes.values(), f"processes left running: {codes}"
    unclean = {label: code for label, code in codes.items() if code != 0 and label not in processes.killed}
    assert not unclean, f"processes did not stop cleanly on SIGTERM: {unclean}\n{processes.logs()}"


def start_chat(processes: Processes, label: str, wrapper: Sequence[str] = (), **extra: str) -> Service:
    """A chat service on the module's context and retrieval services."""
    upstreams = {"KB_CONTEXT_TARGET": processes["context"].target, "KB_RETRIEVAL_TARGET": processes["retrieval"].target}
    return processes.start(
        label,
        "services.chat",
        "chat",
        {"KB_CHAT_PORT": "0", "KB_CHAT_METRICS_PORT": "0", **upstreams, **extra},
        wrapper,
    )


def start_gateway(processes: Processes, label: str, chat: Service) -> Service:
    targets = {"KB_CHAT_TARGET": chat.target, "KB_RETRIEVAL_TARGET": processes["retrieval"].target}
    return processes.start(label, "gateway", "gateway", {"KB_HTTP_PORT": "0", **targets})


@pytest.fixture(scope="module")
def upstream_model() -> Iterator[FakeOpenAI]:
    """The model of the context and retrieval services (summaries, rewrites, assessments)."""
    with FakeOpenAI(default=respond) as server:
        yield server


@pytest.fixture(scope="module")
async def upstreams(
    tmp_path_factory: pytest.TempPathFactory, postgres_url: str, upstream_model: FakeOpenAI
) -> AsyncIterator[Processes]:
    """The context and retrieval services, and the demo application seeded through a chat
    service started for that alone; what the tests ask is about these documents."""
    root = tmp_path_factory.mktemp("lease-upstreams")
    processes = Processes(root, service_env(root / "data", postgres_url, upstream_model))
    try:
        context = processes.start(
            "context", "services.context", "context", {"KB_CONTEXT_PORT": "0", "KB_CONTEXT_METRICS_PORT": "0"}
        )
        retrieval = processes.start(
            "retrieval", "services.retrieval", "retrieval", {"KB_RETRIEVAL_PORT": "0", "KB_RETRIEVAL_METRICS_PORT": "0"}
        )
        await asyncio.gather(processes.wait_serving(context), processes.wait_serving(retrieval))
        seeding = start_chat(processes, "chat-seeding")
        await processes.wait_serving(seeding)
        settings = Settings.from_env(processes.env)
        documents = sample_documents(root / "documents", SEEDED_DOCUMENTS)
        await seed_demo(
            retrieval.target,
            seeding.target,
            operator_token(settings),
            credential=service_credential(settings),
            ids=FIXED_DEMO_IDS,
            docs=documents,
        )
        seeding.process.send_signal(signal.SIGTERM)  # no chat service but the tests' own from here on
        seeding.process.wait(timeout=20)
        yield processes
    finally:
        processes.stop()
    assert_stopped_cleanly(processes)


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAI]:
    """The model the test's chat services answer with: its own, so that no stalled answer of
    another test reaches its recordings."""
    with FakeOpenAI(default=respond) as server:
        yield server


@pytest.fixture
async def lease_stack(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    upstreams: Processes,
    db: Engine,
    fake_model: FakeOpenAI,
) -> AsyncIterator[LeaseStack]:
    """Two chat processes with a gateway each. A test may ask (indirect parametrization) for
    ``{"lock_ttl": None}``: the default TTL; ``{"chat_a_elsewhere": True}``: chat process A in
    a pid namespace of its own."""
    options: dict[str, Any] = getattr(request, "param", {})
    lock_ttl = options.get("lock_ttl", LOCK_TTL)
    wrapper_a: Sequence[str] = ()
    if options.get("chat_a_elsewhere"):
        if not other_pid_namespace_works():
            pytest.skip("needs `unshare --pid` (root, or user namespaces) to start a process in another pid namespace")
        wrapper_a = OTHER_PID_NAMESPACE
    env = {
        **upstreams.env,
        "KB_MODEL_BASE_URL": fake_model.base_url,
        **({"KB_LOCK_TTL": str(lock_ttl)} if lock_ttl is not None else {}),
    }
    processes = Processes(tmp_path_factory.mktemp("lease-stack"), env, upstream=upstreams)
    try:
        chats = [start_chat(processes, "chat-a", wrapper_a), start_chat(processes, "chat-b")]
        await asyncio.gather(*(processes.wait_serving(c) for c in chats))
        gateways = [start_gateway(processes, f"gateway-{x}", chat) for x, chat in zip("ab", chats, strict=True)]
        await asyncio.gather(*(processes.wait_http(g) for g in gateways))
        yield LeaseStack(processes, fake_model, db)
    finally:
        processes.stop()
    assert_stopped_cleanly(processes)


# --- helpers ------------------------------------------------------------------------------


async def open_chat(client: httpx.AsyncClient) -> str:
    response = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
    assert response.status_code == 200, response.text
    chat_id: str = response.json()["data"]
    return chat_id


async def records(client: httpx.AsyncClient, chat_id: str) -> list[dict[str, Any]]:
    response = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["data"]["records"]
    return rows


def assert_complete(frames: list[Frame]) -> None:
    assert frames and frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True, frames[-3:]
    assert not [f for f in frames if f.kind == "error"]
    assert answer_text(frames) == "".join(ANSWER_CHUNKS)


def assert_busy(response: httpx.Response) -> None:
    assert response.status_code == 409, (response.status_code, response.text)
    assert response.json() == {"code": 409, "message": BUSY_MESSAGE, "data": None}


def generate_requests(fake: FakeOpenAI, marker: str) -> list[dict[str, Any]]:
    return [
        b for b in fake.chat_bodies if request_kind(b) == "generate" and marker in str(b["messages"][-1]["content"])
    ]


# --- the cases ----------------------------------------------------------------------------


async def test_twenty_simultaneous_questions_on_two_processes_exactly_one_runs(lease_stack: LeaseStack) -> None:
    async with lease_stack.http("gateway-a") as a, lease_stack.http("gateway-b") as b:
        chat_id = await open_chat(a)
        through = [("a", a)] * 10 + [("b", b)] * 10  # 10 questions through each chat process
        start = asyncio.Event()

        async def one(client: httpx.AsyncClient) -> tuple[httpx.Response, list[Frame]]:
            await start.wait()
            return await ask(client, chat_id, QUESTION)

        tasks = [asyncio.ensure_future(one(client)) for _, client in through]
        await asyncio.sleep(0)  # every task is waiting on the event: release them together
        started = time.monotonic()
        start.set()
        results = await asyncio.gather(*tasks)
        elapsed = time.monotonic() - started

        ran = [(gw, frames) for (gw, _), (r, frames) in zip(through, results, strict=True) if r.status_code == 200]
        busy = [(gw, r) for (gw, _), (r, _) in zip(through, results, strict=True) if r.status_code != 200]
        assert len(ran) == 1, [
            (gw, r.status_code, r.text[:200]) for (gw, _), (r, _) in zip(through, results, strict=True)
        ]
        winner, frames = ran[0]
        assert_complete(frames)
        assert len(busy) == 19
        for _, response in busy:
            assert_busy(response)
        refused_by = {gw: sum(1 for g, _ in busy if g == gw) for gw in "ab"}
        # Each gateway reaches only its own chat process: both processes refused questions.
        assert refused_by == {"a": 9 if winner == "a" else 10, "b": 9 if winner == "b" else 10}
        assert elapsed >= CHUNK_DELAY * len(ANSWER_CHUNKS)
        assert len(generate_requests(lease_stack.fake, QUESTION)) == 1, "only one question reached the model"
        assert [r[1] for r in record_rows(lease_stack.db, chat_id)] == ["answered"], "a refused question left no record"
        assert lease_row(lease_stack.db, chat_id) is None, "the lease is released when the answer ends"

        # The answer has ended: the next question runs, through the process that did not answer.
        other = b if winner == "a" else a
        response, frames = await ask(other, chat_id, FOLLOW_UP)
        assert response.status_code == 200, response.text
        assert_complete(frames)
        assert [r["status"] for r in await records(other, chat_id)] == ["answered", "answered"]
        assert lease_row(lease_stack.db, chat_id) is None
        print(f"\n20 simultaneous questions: 1 ran (via gateway {winner}), 19 refused {refused_by}, {elapsed:.2f} s")


Answering = asyncio.Future[tuple[httpx.Response, list[Frame]]]


async def hang_through(client: httpx.AsyncClient, fake: FakeOpenAI, chat_ids: Sequence[str]) -> list[Answering]:
    """HANG_QUESTION on each chat through ``client``, once every generation has reached the model
    (and stalls there): the answers' streams, still open."""
    hanging: list[Answering] = [asyncio.ensure_future(ask(client, chat_id, HANG_QUESTION)) for chat_id in chat_ids]

    def generating() -> int:
        for stream in hanging:
            if stream.done():
                pytest.fail(f"a question ended before generating: {stream.result()[0].text}")
        return len(generate_requests(fake, HANG_MARKER))

    await eventually(
        generating, lambda n: n >= len(chat_ids), timeout=60, what="the stalled generations reaching the model"
    )
    return hanging


async def assert_ended_by_the_kill(stream: Answering) -> None:
    """The HTTP stream of a killed answer ends with an error event (503), never with is_end."""
    response, frames = await asyncio.wait_for(stream, 30)
    assert response.status_code == 200
    assert not [f for f in frames if f.kind == "chunk" and f.data["is_end"]], frames
    assert frames and frames[-1].kind == "error", frames[-3:]
    assert frames[-1].data["code"] == 503, frames[-1].data


@pytest.mark.parametrize("lease_stack", [{"chat_a_elsewhere": True}], indirect=True)
async def test_a_holder_killed_in_another_pid_namespace_keeps_its_lease_until_it_expires(
    lease_stack: LeaseStack,
) -> None:
    chat_a = lease_stack["chat-a"]
    assert chat_a.process.poll() is None, "chat process A must be alive"
    async with lease_stack.http("gateway-a") as a, lease_stack.http("gateway-b") as b:
        chat_id = await open_chat(b)
        # Through gateway A, so chat process A holds the lease; the model stalls mid-answer.
        [hanging] = await hang_through(a, lease_stack.fake, [chat_id])
        running = record_rows(lease_stack.db, chat_id)
        assert [status for _, status, _, _ in running] == ["running"]
        lease = lease_row(lease_stack.db, chat_id)
        assert lease is not None and lease[0] == running[0][2], "the running record names the lease holder"

        lease_stack.processes.kill("chat-a")
        killed_at, killed_wall = time.monotonic(), utcnow()

        await assert_ended_by_the_kill(hanging)
        assert lease_stack.fake.wait_for_cancelled_stream(10), "the model saw its client go away"

        # The dead holder's lease is still valid, and from here /proc cannot tell that its
        # process is gone (another pid namespace): the surviving process refuses the chat.
        lease = lease_row(lease_stack.db, chat_id)
        assert lease is not None, "a killed holder cannot release its lease"
        expires_at = lease[1]
        response, _ = await ask(b, chat_id, FOLLOW_UP)
        assert utcnow() < expires_at, "the refusal came after the lease had expired: the machine is too slow"
        assert_busy(response)

        # Once it expires (no renewals any more), the surviving process takes the chat over.
        attempts = 0

        async def follow_up() -> list[Frame] | None:
            """The answer's frames once the chat is taken over; None while it is still busy."""
            nonlocal attempts
            attempts += 1
            response, frames = await ask(b, chat_id, FOLLOW_UP)
            if response.status_code == 200:
                return frames
            assert_busy(response)
            return None

        frames = await eventually(
            follow_up,
            lambda answered: answered is not None,
            timeout=killed_at + LOCK_TTL + 10 - time.monotonic(),
            interval=0.2,
            what="the dead holder's lease expiring",
        )
        assert frames is not None
        assert_complete(frames)
        (_, _, old_holder, _), (_, _, new_holder, taken_at) = record_rows(lease_stack.db, chat_id)
        assert new_holder != old_holder
        assert taken_at >= expires_at, "the lease was taken over before it expired"

        rows = await records(b, chat_id)
        assert [r["status"] for r in rows] == ["interrupted", "answered"], rows
        assert rows[0]["problem_text"] == HANG_QUESTION
        assert rows[0]["error"] == "the process answering it stopped"
        assert lease_row(lease_stack.db, chat_id) is None
        print(
            f"\nkilled holder: lease expired {(expires_at - killed_wall).total_seconds():.2f} s after the kill, "
            f"taken over after {(taken_at - killed_wall).total_seconds():.2f} s (TTL {LOCK_TTL:g} s, {attempts} attempts)"
        )


async def taken_from_this_process(url: str, chat_id: str) -> bool:
    """Whether the test's own process (another process on this host) can take the chat's lease."""
    engine = create_async_db_engine(url)
    try:
        return await LeaseStore(session_factory(engine), DEFAULT_LOCK_TTL).try_acquire(
            chat_id, new_holder("probe"), "question"
        )
    finally:
        await engine.dispose()


@pytest.mark.parametrize("lease_stack", [{"lock_ttl": None}], indirect=True)
async def test_a_holder_killed_on_this_host_is_not_waited_for(lease_stack: LeaseStack, postgres_url: str) -> None:
    """With the default 30 s TTL: a live holder in another process keeps its chat busy; once it
    is killed, a Stop through the other process frees one of its chats and a question on the
    other is accepted on the first try, both before the dead holder's lease would expire."""
    db = lease_stack.db
    async with lease_stack.http("gateway-a") as a, lease_stack.http("gateway-b") as b:
        asked, stopped = await open_chat(b), await open_chat(b)
        hanging = await hang_through(a, lease_stack.fake, [asked, stopped])  # chat process A holds both

        response, _ = await ask(b, asked, FOLLOW_UP)
        assert_busy(response)  # its holder lives, in another process on this host
        assert not await taken_from_this_process(postgres_url, asked), "nor is it taken from here"
        held = {chat_id: lease_row(db, chat_id) for chat_id in (asked, stopped)}
        assert all(lease is not None for lease in held.values())

        lease_stack.processes.kill("chat-a")
        for stream in hanging:
            await assert_ended_by_the_kill(stream)

        stop = await b.post(f"/api/application/chat_message/{stopped}/stop")
        assert stop.status_code == 200 and stop.json()["data"] == {"stopped": False}, stop.text  # nothing ran
        assert lease_row(db, stopped) is None, "the Stop freed the dead holder's chat"
        assert [status for _, status, _, _ in record_rows(db, stopped)] == ["interrupted"]

        response, frames = await ask(b, asked, FOLLOW_UP)  # the first try
        assert response.status_code == 200, response.text
        assert_complete(frames)
        lease = held[asked]
        assert lease is not None
        (_, _, old_holder, _), (_, _, new_holder_name, taken_at) = record_rows(db, asked)
        assert old_holder == lease[0] and new_holder_name != old_holder
        assert taken_at < lease[1], "taken over while the dead holder's lease was still valid"
        rows = await records(b, asked)
        assert [r["status"] for r in rows] == ["interrupted", "answered"], rows
        assert rows[0]["error"] == "the process answering it stopped"
        assert lease_row(db, asked) is None
    print(
        f"\nkilled holder on this host: taken over {(lease[1] - taken_at).total_seconds():.1f} s before its "
        f"lease would have expired (TTL {DEFAULT_LOCK_TTL:g} s)"
    )


@pytest.mark.parametrize("lease_stack", [{"lock_ttl": None}], indirect=True)
async def test_a_chat_service_started_after_a_crash_finds_the_crashed_ones_chats_free(
    lease_stack: LeaseStack,
) -> None:
    """Every chat service killed (the one answering mid-answer), a new one started: before
    anyone asks, it has freed the dead holder's lease and closed its record ``interrupted``;
    the next question on that chat is accepted on the first try, with the default 30 s TTL."""
    db, processes = lease_stack.db, lease_stack.processes
    async with lease_stack.http("gateway-a") as a:
        chat_id = await open_chat(a)
        [hanging] = await hang_through(a, lease_stack.fake, [chat_id])
        lease = lease_row(db, chat_id)
        assert lease is not None
        processes.kill("chat-b")  # idle: no other chat service is left to free anything
        processes.kill("chat-a")
        await assert_ended_by_the_kill(hanging)
    assert lease_row(db, chat_id) is not None, "nothing has freed the chat yet"

    chat_c = start_chat(processes, "chat-c")
    await processes.wait_serving(chat_c)
    assert lease_row(db, chat_id) is None, "the new chat service freed the dead holder's lease as it started"
    assert [status for _, status, _, _ in record_rows(db, chat_id)] == ["interrupted"]

    gateway_c = start_gateway(processes, "gateway-c", chat_c)
    await processes.wait_http(gateway_c)
    async with lease_stack.http("gateway-c") as c:
        response, frames = await ask(c, chat_id, FOLLOW_UP)  # the first try
        assert response.status_code == 200, response.text
        assert_complete(frames)
        rows = await records(c, chat_id)
    assert [r["status"] for r in rows] == ["interrupted", "answered"], rows
    assert rows[0]["problem_text"] == HANG_QUESTION and rows[0]["error"] == "the process answering it stopped"
    (_, _, _, taken_at) = record_rows(db, chat_id)[-1]
    assert taken_at < lease[1], "answered while the dead holder's lease would still have been valid"
