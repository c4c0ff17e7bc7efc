"""Many large uploads at once against the stack as processes, seen as their uploaders and the
operator see them: each upload's answer (200 with its document, or 503 with ``Retry-After`` once
the upload budget is spent, then tried again after that wait when asked to), the gateway's and
the retrieval service's memory meanwhile (sampled from ``/proc``; the retrieval service's
checking and parsing children apart), and how long until every document is ready. Shared by the
end-to-end test and ``make bench`` (section ``upload_burst``)."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.fixtures.big_uploads import brochure_pdf
from tests.process_stack import child_pids

RUNNING = frozenset({"queued", "parsing", "embedding"})
SAMPLE_SECONDS = 0.02


def rss_mb(pid: int) -> float:
    """A process's resident memory now, MB (0 once it is gone)."""
    with contextlib.suppress(FileNotFoundError, ProcessLookupError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class MemoryWatch:
    """The largest resident memory each named process reached while watched, and the largest
    its children held together (the retrieval service's checking and parsing children)."""

    pids: Mapping[str, int]
    peaks: dict[str, float] = field(default_factory=dict)
    children_peaks: dict[str, float] = field(default_factory=dict)

    async def _sample(self) -> None:
        while True:
            for name, pid in self.pids.items():
                self.peaks[name] = max(self.peaks.get(name, 0.0), rss_mb(pid))
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                    children = sum(rss_mb(child) for child in child_pids(pid))
                    self.children_peaks[name] = max(self.children_peaks.get(name, 0.0), children)
            await asyncio.sleep(SAMPLE_SECONDS)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[MemoryWatch]:
        sampler = asyncio.create_task(self._sample())
        try:
            yield self
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler


@dataclass(frozen=True)
class Answer:
    status: int
    retry_after: str  # the header of a 503 ("" on any other answer)
    document_id: str  # the document a 200 made ("" otherwise)
    message: str


@dataclass
class Burst:
    first: list[Answer]  # each upload's first answer, all sent at once
    attempts: int  # uploads sent in all, the ones tried again after a 503 included
    documents: list[str]  # every document made
    seconds_stored: float  # from the first upload until the last one was answered 200
    refusals: Counter[str] = field(default_factory=Counter)  # answers other than 200, by status


async def _upload(client: httpx.AsyncClient, dataset_id: str, path: Path) -> Answer:
    """One upload of the file at ``path``, read from disk as it is sent (the client holds none of it)."""
    with path.open("rb") as file:
        answer = await client.post(f"/api/dataset/{dataset_id}/document", files={"file": (path.name, file)})
    body: dict[str, Any] = (
        answer.json() if answer.headers.get("content-type", "").startswith("application/json") else {}
    )
    document = body.get("data") if answer.status_code == 200 else None
    return Answer(
        answer.status_code,
        answer.headers.get("retry-after", ""),
        str(document["id"]) if isinstance(document, dict) else "",
        str(body.get("message", answer.text[:200])),
    )


def burst_files(folder: Path, count: int, size: int, tag: str) -> list[Path]:
    """``count`` PDFs of ``size`` bytes written to ``folder``, each with its own words (so none is
    taken for another, unchanged)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"brochure-{tag}-{i}.pdf"
        path.write_bytes(brochure_pdf(size, f"Upload burst {tag} file {i}"))
        paths.append(path)
    return paths


async def upload_burst(client: httpx.AsyncClient, dataset_id: str, files: list[Path], *, again: bool) -> Burst:
    """Every file of ``files`` uploaded at once; with ``again``, each refused one is sent again
    after its ``Retry-After`` until it is taken in."""
    count = len(files)
    started = time.perf_counter()
    first: list[Answer] = []
    refusals: Counter[str] = Counter()
    attempts = 0
    stored_at = started

    async def one(index: int) -> str:
        nonlocal attempts, stored_at
        tried = False
        while True:
            attempts += 1
            answer = await _upload(client, dataset_id, files[index])
            if not tried:
                first.append(answer)
                tried = True
            if answer.status == 200:
                stored_at = max(stored_at, time.perf_counter())
                return answer.document_id
            refusals[str(answer.status)] += 1
            if not again or answer.status != 503:
                return ""
            await asyncio.sleep(float(answer.retry_after or 1))

    made = await asyncio.gather(*(one(i) for i in range(count)))
    return Burst(first, attempts, [d for d in made if d], stored_at - started, refusals)


async def until_ready(client: httpx.AsyncClient, dataset_id: str, documents: list[str], timeout: float) -> float:
    """Seconds until none of ``documents`` is queued, parsing or embedding (each must be ready)."""
    started = time.perf_counter()
    while True:
        listed = (await client.get(f"/api/dataset/{dataset_id}/document")).json()["data"]
        mine = [d for d in listed if d["id"] in set(documents)]
        if len(mine) == len(documents) and not any(d["status"] in RUNNING for d in mine):
            assert all(d["status"] == "ready" for d in mine), [(d["name"], d["status"], d["error"]) for d in mine]
            return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise AssertionError(f"documents not ready after {timeout} s: {[(d['name'], d['status']) for d in mine]}")
        await asyncio.sleep(0.2)


async def settled_rss_mb(pid: int, near: float, seconds: float) -> float:
    """The process's resident memory once it is back within ``near`` MB of where it started (or
    after ``seconds``, whatever it is then): memory given back takes a moment after the work."""
    deadline = time.perf_counter() + seconds
    while True:
        now = rss_mb(pid)
        if now <= near or time.perf_counter() > deadline:
            return now
        await asyncio.sleep(0.5)


def leftovers(data_dir: Path) -> dict[str, int]:
    """What a burst could have left in a stack's data folder: shares of the upload budget, stored
    bytes of jobs, spooled files (all should be none once every upload is ready)."""
    with sqlite3.connect(data_dir / "kb.sqlite3") as database:
        held = database.execute("SELECT count(*) FROM upload_reservation").fetchone()[0]
        chunks = database.execute("SELECT count(*) FROM ingest_source_chunk").fetchone()[0]
    spooled = sum(1 for path in (data_dir / "spool").rglob("*") if path.is_file())
    return {"shares": int(held), "job chunks": int(chunks), "spooled files": spooled}
