"""An upload's way in over HTTP, against a stack of its own with a small upload budget, as
uploaders that misbehave use it: past the budget an upload is refused at once (503, ``Retry-After``,
a sentence) and taken once the budget is back; a body that trickles gets 408 when its time is up;
a client that goes away mid-body leaves nothing; a full disk is refused in words (507); many small
uploads at once are all taken in; and an ingestion job's stored bytes go when it ends, whether it
finished, failed or was cancelled. After each: no share of the budget is held, no file is left in
the spool, no job row keeps bytes it no longer needs, nothing half-stored.

The spool lives on a real 16 MiB tmpfs (``mount -t tmpfs``, as root), filled for the full-disk
case; where mounting is refused its ``statvfs`` is injected instead (the test prints which)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from kbcore.db.engine import run_read
from kbcore.db.tables import IngestJob, IngestSourceChunk, UploadReservation
from kbcore.errors import DISK_FULL
from services.retrieval.ingestion.jobs.upload_budget import RETRY_SECONDS, UPLOADS_FULL
from tests.document_jobs import wait_for_documents
from tests.e2e.private_stack import Seeded, private_stack
from tests.eventually import eventually
from tests.fixtures import documents
from tests.full_disk import InjectedDisk, RealDisk, mount_tmpfs, unmount
from tests.harness import READS_ENGLISH

pytestmark = [pytest.mark.fault, pytest.mark.own_database]  # a stack of its own, its SQLite file

MiB = 1024 * 1024
BODY_SECONDS = 3.0
LIMITS: dict[str, Any] = {
    "upload_max_mb": 2,  # a file; a body 3 MiB with its form
    "upload_budget_mb": 4,
    "upload_caller_mb": 4,
    "upload_body_seconds": BODY_SECONDS,
    "disk_reserve_mb": 1,
}


@dataclass
class Intake:
    seeded: Seeded
    spool: Path
    disk_method: str

    @property
    def dataset(self) -> str:
        return self.seeded.dataset_id

    async def count(self, table: Any) -> int:
        return await run_read(
            self.seeded.sessions, lambda s: int(s.scalar(select(func.count()).select_from(table)) or 0)
        )

    async def held(self) -> int:
        return await self.count(UploadReservation)

    def spooled(self) -> list[Path]:
        return [p for p in self.spool.rglob("*") if p.is_file() and p.name != "filler"]

    async def nothing_left(self) -> None:
        """No share of the budget held, no file in the spool (checked once the last request ended)."""
        await eventually(self.held, lambda held: held == 0, timeout=10, what="every share of the budget back")
        assert self.spooled() == [], self.spooled()


@pytest.fixture(scope="module")
def spool_disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, bool]]:
    folder = tmp_path_factory.mktemp("intake")
    spool = folder / "data" / "spool"
    mounted = mount_tmpfs(spool, "16m")
    try:
        yield folder, mounted
    finally:
        if mounted:
            unmount(spool)


@pytest.fixture(scope="module")
async def intake(spool_disk: tuple[Path, bool], embedder: Any, offline_model: Any) -> AsyncIterator[Intake]:
    folder, mounted = spool_disk
    async with private_stack(folder / "data", embedder=embedder, model=offline_model, **LIMITS) as seeded:
        method = "a real 16 MiB tmpfs" if mounted else "an injected statvfs (mounting a tmpfs was refused)"
        yield Intake(seeded, folder / "data" / "spool", method)


@pytest.fixture
async def client(intake: Intake) -> AsyncIterator[httpx.AsyncClient]:
    async with intake.seeded.stack.http() as http:
        yield http


class RawUpload:
    """An upload written by hand on its own connection, so a test decides how much of the body
    is sent and when: a slow client, or one that goes away."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: bytes) -> None:
        self.reader, self.writer, self.body = reader, writer, body

    @classmethod
    async def start(cls, intake: Intake, name: str, data: bytes, sent: int) -> RawUpload:
        stack = intake.seeded.stack
        headers = {"Authorization": f"Bearer {stack.operator_token}", **READS_ENGLISH}
        url = f"{stack.url}/api/dataset/{intake.dataset}/document"
        request = httpx.Request("POST", url, files={"file": (name, data)}, headers=headers)
        body = request.read()
        head = f"POST {request.url.raw_path.decode()} HTTP/1.1\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in request.headers.items()) + "\r\n"
        reader, writer = await asyncio.open_connection(request.url.host, request.url.port)
        writer.write(head.encode() + body[:sent])
        await writer.drain()
        return cls(reader, writer, body)

    async def answer(self, timeout: float) -> tuple[int, dict[str, str], str]:
        """The status, headers and body of the answer (read until the connection closes or the
        body is whole)."""
        data = b""
        async with asyncio.timeout(timeout):
            while b"\r\n\r\n" not in data or len(data) < data.index(b"\r\n\r\n") + 4 + _length(data):
                piece = await self.reader.read(65536)
                if not piece:
                    break
                data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        return int(lines[0].split()[1]), headers, body.decode()

    def close(self) -> None:
        self.writer.close()


def _length(data: bytes) -> int:
    head = data.partition(b"\r\n\r\n")[0].decode("latin-1").lower()
    for line in head.split("\r\n"):
        if line.startswith("content-length:"):
            return int(line.split(":", 1)[1])
    return 0


def markdown(words: str, size: int) -> bytes:
    """A Markdown file of ``size`` bytes saying ``words`` (the rest blank lines)."""
    text = f"# {words}\n\n{words}。\n".encode()
    return text + b"\n" * (size - len(text))


async def test_past_the_budget_an_upload_is_refused_at_once_and_taken_once_the_budget_is_back(
    intake: Intake, client: httpx.AsyncClient, unique: str
) -> None:
    slow = [
        await RawUpload.start(intake, f"slow-{unique}-{i}.md", markdown(f"慢速上传{i}", 1900 * 1024), 4096)
        for i in range(2)
    ]
    try:
        await eventually(intake.held, lambda held: held == 2, timeout=10, what="two slow uploads admitted")
        started = time.perf_counter()
        refused = await client.post(
            f"/api/dataset/{intake.dataset}/document", files={"file": (f"late-{unique}.md", markdown("迟到", MiB // 2))}
        )
        waited = time.perf_counter() - started
        assert refused.status_code == 503, refused.text
        assert refused.json() == {"code": 503, "message": str(UPLOADS_FULL), "data": None}
        assert refused.headers["retry-after"] == str(RETRY_SECONDS)
        assert waited < BODY_SECONDS, f"the refusal waited {waited:.1f} s: it was not at once"
        chinese = await client.post(
            f"/api/dataset/{intake.dataset}/document",
            files={"file": (f"late-{unique}.md", markdown("迟到", MiB // 2))},
            headers={"Accept-Language": "zh-CN"},
        )
        assert chinese.status_code == 503 and "KB_UPLOAD_BUDGET_MB" in chinese.json()["message"], chinese.text
        assert "服务器同时接收的上传已达上限" in chinese.json()["message"], chinese.text
        slow[0].close()  # one slow uploader gives up: its share comes back
        await eventually(intake.held, lambda held: held == 1, timeout=10, what="the share of a client gone")
        taken = await client.post(
            f"/api/dataset/{intake.dataset}/document", files={"file": (f"late-{unique}.md", markdown("迟到", MiB // 2))}
        )
        assert taken.status_code == 200, taken.text
        [ready] = await wait_for_documents(client, intake.dataset, [taken.json()["data"]["id"]])
        assert ready["status"] == "ready", ready
    finally:
        for upload in slow:
            upload.close()
    await intake.nothing_left()
    names = {d["name"] for d in (await client.get(f"/api/dataset/{intake.dataset}/document")).json()["data"]}
    assert not any(name.startswith("慢速上传") for name in names), names


async def test_a_body_that_trickles_gets_408_when_its_time_is_up_and_nothing_is_stored(
    intake: Intake, client: httpx.AsyncClient, unique: str
) -> None:
    upload = await RawUpload.start(intake, f"trickle-{unique}.md", markdown("涓流", MiB), 64 * 1024)
    try:
        await eventually(intake.held, lambda held: held == 1, timeout=10, what="the trickling upload admitted")
        started = time.perf_counter()
        status, headers, body = await upload.answer(timeout=BODY_SECONDS + 10)
        waited = time.perf_counter() - started
    finally:
        upload.close()
    assert status == 408, body
    assert "did not arrive within 3 seconds (KB_UPLOAD_BODY_SECONDS); nothing was stored" in body, body
    assert headers.get("connection") == "close", headers
    assert waited < BODY_SECONDS + 2, f"the 408 came after {waited:.1f} s"
    await intake.nothing_left()
    names = {d["name"] for d in (await client.get(f"/api/dataset/{intake.dataset}/document")).json()["data"]}
    assert "涓流" not in names


async def test_a_client_gone_mid_body_leaves_nothing_and_the_next_upload_is_taken(
    intake: Intake, client: httpx.AsyncClient, unique: str
) -> None:
    before = await intake.count(IngestJob)
    upload = await RawUpload.start(intake, f"gone-{unique}.md", markdown("中途离开", 3 * MiB // 2), MiB)
    await eventually(intake.held, lambda held: held == 1, timeout=10, what="the upload admitted")
    upload.close()
    await intake.nothing_left()
    assert await intake.count(IngestJob) == before, "a job was queued for an upload that never arrived"
    taken = await client.post(
        f"/api/dataset/{intake.dataset}/document", files={"file": (f"next-{unique}.md", markdown("下一个", 4096))}
    )
    assert taken.status_code == 200, taken.text
    await wait_for_documents(client, intake.dataset, [taken.json()["data"]["id"]])
    await intake.nothing_left()


async def test_many_small_uploads_at_once_are_all_taken_in_and_leave_nothing_behind(
    intake: Intake, client: httpx.AsyncClient, unique: str
) -> None:
    async def upload(i: int) -> httpx.Response:
        data = markdown(f"小文件{unique}第{i}号", 2048)
        return await client.post(f"/api/dataset/{intake.dataset}/document", files={"file": (f"small-{i}.md", data)})

    answers = await asyncio.gather(*(upload(i) for i in range(40)))
    assert [a.status_code for a in answers] == [200] * 40, [a.text for a in answers if a.status_code != 200]
    made = [a.json()["data"]["id"] for a in answers]
    listed = await wait_for_documents(client, intake.dataset, made, timeout=300)
    assert {d["status"] for d in listed} == {"ready"}, [d for d in listed if d["status"] != "ready"]
    await intake.nothing_left()
    assert await intake.count(IngestSourceChunk) == 0, "ended jobs still keep their bytes"


async def test_a_job_keeps_its_bytes_while_it_runs_and_none_once_it_ends_however_it_ends(
    intake: Intake, client: httpx.AsyncClient, unique: str
) -> None:
    long = await client.post(
        f"/api/dataset/{intake.dataset}/document", files={"file": (f"long-{unique}.pdf", documents.big_pdf(400))}
    )
    assert long.status_code == 200, long.text
    long_id = long.json()["data"]["id"]
    assert await intake.count(IngestSourceChunk) > 0, "a queued job has no bytes to parse"
    path = f"/api/dataset/{intake.dataset}/document/{long_id}"
    await eventually(
        lambda: client.get(path), lambda r: r.json()["data"]["status"] == "parsing", timeout=60, what="parsing"
    )
    cancelled = await client.put(f"{path}/cancel_task", json={"type": 1})
    assert cancelled.status_code == 200, cancelled.text
    scanned = await client.post(
        f"/api/dataset/{intake.dataset}/document", files={"file": (f"scan-{unique}.pdf", documents.scanned_pdf())}
    )
    assert scanned.status_code == 200, scanned.text
    ended = await wait_for_documents(client, intake.dataset, [long_id, scanned.json()["data"]["id"]])
    assert sorted(d["status"] for d in ended) == ["cancelled", "failed"], ended
    assert await intake.count(IngestSourceChunk) == 0, "a cancelled or failed job kept its bytes"
    await intake.nothing_left()


async def test_deleting_a_document_while_its_job_runs_takes_the_jobs_bytes_with_it(
    intake: Intake, client: httpx.AsyncClient, unique: str
) -> None:
    long = await client.post(
        f"/api/dataset/{intake.dataset}/document", files={"file": (f"deleted-{unique}.pdf", documents.big_pdf(400))}
    )
    assert long.status_code == 200, long.text
    assert await intake.count(IngestSourceChunk) > 0
    deleted = await client.delete(f"/api/dataset/{intake.dataset}/document/{long.json()['data']['id']}")
    assert deleted.status_code == 200, deleted.text
    assert await intake.count(IngestSourceChunk) == 0, "a deleted document's job kept its bytes"
    await intake.nothing_left()


async def test_an_upload_on_a_full_disk_is_refused_in_words_and_leaves_nothing(
    intake: Intake, client: httpx.AsyncClient, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk: RealDisk | InjectedDisk = (
        RealDisk(intake.spool, "16 MiB")
        if intake.disk_method.startswith("a real")
        else InjectedDisk(intake.spool, monkeypatch)
    )
    before = await intake.count(IngestJob)
    disk.fill(leave=MiB + MiB // 2)  # the 1 MiB reserve and half a MiB: not the upload's first MiB
    try:
        refused = await client.post(
            f"/api/dataset/{intake.dataset}/document",
            files={"file": (f"full-{unique}.md", markdown("磁盘已满", MiB + 10))},
        )
        assert refused.status_code == 507, refused.text
        assert refused.json() == {"code": 507, "message": str(DISK_FULL), "data": None}
        assert await intake.count(IngestJob) == before
        await intake.nothing_left()
    finally:
        disk.empty()
    taken = await client.post(
        f"/api/dataset/{intake.dataset}/document", files={"file": (f"full-{unique}.md", markdown("磁盘已满", MiB + 10))}
    )
    assert taken.status_code == 200, taken.text
    [ready] = await wait_for_documents(client, intake.dataset, [taken.json()["data"]["id"]])
    assert ready["status"] == "ready", ready
    await intake.nothing_left()
    print(f"\nupload on a full spool disk ({disk.method}): 507 in words, nothing stored, taken once space was back")
