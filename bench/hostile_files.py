"""Hostile files against the stack as separate processes: every file of the corpus
(``tests.fixtures.hostile``) submitted three times while visitors keep asking questions, and a
long parse cancelled. What a user would see: the retrieval service's memory (its own peak, and
the parsing children's beside it), whether it ever died, how many questions failed meanwhile,
and how long a cancel takes to end the parse.

``python -m bench.hostile_files`` runs this section alone."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from bench.answers import ANSWERED, ask_once
from bench.processes import gateway_client, running_stack
from bench.table import Row, run_alone
from tests.fixtures import documents, hostile
from tests.process_stack import child_pids

SECTION = "hostile files"
ROUNDS = 3
RSS_TARGET_MB = 600
CANCEL_TARGET_S = 1.0
QUESTION = "重症医学科每天的探视时间是几点？"
RUNNING = {"queued", "parsing", "embedding"}


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


class MemoryWatch:
    """The retrieval process's peak RSS (the kernel's own high-water mark) and, sampled, the
    largest RSS any of its parsing children reached."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.child_peak_kib = 0

    async def sample(self) -> None:
        while True:
            for child in child_pids(self.pid):
                with contextlib.suppress(FileNotFoundError, ValueError):
                    self.child_peak_kib = max(self.child_peak_kib, _status_kib(child, "VmRSS"))
            await asyncio.sleep(0.02)

    def peak_mb(self) -> float:
        return _status_kib(self.pid, "VmHWM") / 1024


async def _ask_until(client: httpx.AsyncClient, app_id: str, stop: asyncio.Event, outcomes: Counter[str]) -> None:
    """A visitor asking one question after another, each in a new chat, until ``stop``."""
    while not stop.is_set():
        chat = await client.get(f"/api/application/{app_id}/chat/open")
        if chat.status_code != 200:
            outcomes[f"HTTP {chat.status_code}"] += 1
            continue
        outcomes[(await ask_once(client, chat.json()["data"], QUESTION)).outcome] += 1


async def _settled(client: httpx.AsyncClient, dataset_id: str, document_id: str) -> dict[str, Any]:
    while True:
        document = (await client.get(f"/api/dataset/{dataset_id}/document/{document_id}")).json()["data"]
        if document["status"] not in RUNNING:
            return dict(document)
        await asyncio.sleep(0.05)


async def _submit_corpus(client: httpx.AsyncClient, dataset_id: str) -> Counter[str]:
    """Every file of the corpus ``ROUNDS`` times; how each ended (400 in the request, or failed)."""
    ended: Counter[str] = Counter()
    files = [(file, file.make()) for file in hostile.CORPUS]
    for _ in range(ROUNDS):
        for file, data in files:
            answer = await client.post(
                f"/api/dataset/{dataset_id}/document", files={"file": (file.filename, data)}, timeout=120
            )
            if answer.status_code != 200:
                ended[f"refused {answer.status_code}"] += 1
                continue
            document = await _settled(client, dataset_id, answer.json()["data"]["id"])
            ended[f"document {document['status']}"] += 1
    return ended


async def _cancel_seconds(client: httpx.AsyncClient, dataset_id: str) -> float:
    """From the cancel request to the document reading cancelled, for a PDF caught mid-parse."""
    answer = await client.post(
        f"/api/dataset/{dataset_id}/document", files={"file": ("长报告.pdf", documents.big_pdf(1500))}, timeout=120
    )
    document_id = answer.json()["data"]["id"]
    path = f"/api/dataset/{dataset_id}/document/{document_id}"
    while (await client.get(path)).json()["data"]["status"] != "parsing":
        await asyncio.sleep(0.02)
    await asyncio.sleep(1.0)  # well into the parse
    started = time.perf_counter()
    await client.put(f"{path}/cancel_task", json={"type": 1})
    document = await _settled(client, dataset_id, document_id)
    assert document["status"] == "cancelled", document
    return time.perf_counter() - started


@contextlib.asynccontextmanager
async def _visitors(info: dict[str, Any], app_id: str, count: int) -> AsyncIterator[Counter[str]]:
    outcomes: Counter[str] = Counter()
    stop = asyncio.Event()
    async with gateway_client(info) as client:
        tasks = [asyncio.create_task(_ask_until(client, app_id, stop, outcomes)) for _ in range(count)]
        try:
            yield outcomes
        finally:
            stop.set()
            await asyncio.gather(*tasks)


async def run() -> tuple[list[Row], dict[str, Any]]:
    began = time.perf_counter()
    async with running_stack({}) as (info, app_id):
        pid = int(info["pids"]["retrieval"])
        watch = MemoryWatch(pid)
        sampler = asyncio.create_task(watch.sample())
        async with gateway_client(info) as client:
            dataset_id = (await client.post("/api/dataset", json={"name": "恶意文件"})).json()["data"]["id"]
            async with _visitors(info, app_id, 2) as outcomes:
                ended = await _submit_corpus(client, dataset_id)
            cancel = await _cancel_seconds(client, dataset_id)
        sampler.cancel()
        alive = os.path.exists(f"/proc/{pid}") and _status_kib(pid, "VmRSS") > 0
        raw = {
            "retrieval_peak_mb": watch.peak_mb(),
            "child_peak_mb": watch.child_peak_kib / 1024,
            "alive": alive,
            "ended": dict(ended),
            "questions": dict(outcomes),
            "cancel_seconds": cancel,
            "seconds": time.perf_counter() - began,
        }
    return _rows(raw), raw


def _rows(raw: dict[str, Any]) -> list[Row]:
    questions: dict[str, int] = raw["questions"]
    failed = sum(n for outcome, n in questions.items() if outcome != ANSWERED)
    files = f"{len(hostile.CORPUS)} hostile files × {ROUNDS}"
    ended = ", ".join(f"{n} {outcome}" for outcome, n in sorted(raw["ended"].items()))
    return [
        Row(
            SECTION,
            f"{files}: retrieval service's peak RSS",
            f"{raw['retrieval_peak_mb']:.0f} MB",
            f"< {RSS_TARGET_MB} MB",
            raw["retrieval_peak_mb"] < RSS_TARGET_MB,
        ),
        Row(
            SECTION,
            f"{files}: largest parsing child (its own limit KB_PARSE_MEMORY_MB)",
            f"{raw['child_peak_mb']:.0f} MB",
        ),
        Row(
            SECTION,
            f"{files}: retrieval process still the same, alive",
            "yes" if raw["alive"] else "no",
            "yes",
            raw["alive"],
        ),
        Row(SECTION, f"{files}: how they ended", ended),
        Row(
            SECTION,
            f"{files}: questions asked meanwhile (2 visitors), failed",
            f"{failed} of {sum(questions.values())}",
            "0",
            failed == 0,
        ),
        Row(
            SECTION,
            "cancel of a 1,500-page PDF mid-parse → document cancelled",
            f"{raw['cancel_seconds']:.2f} s",
            f"≤ {CANCEL_TARGET_S:.0f} s",
            raw["cancel_seconds"] <= CANCEL_TARGET_S,
        ),
    ]


if __name__ == "__main__":
    run_alone(run)
