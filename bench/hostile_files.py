"""Hostile files against the stack as separate processes: every file of the corpus
(``tests.fixtures.hostile``) submitted three times while visitors keep asking questions, a long
parse cancelled, and one uploader's huge and slow files beside another's small one. What a user
would see: the retrieval service's memory (its own peak, and the parsing children's beside it),
whether it ever died, how many questions failed meanwhile, how long a cancel takes to end the
parse, how long the 50 MiB one-line file takes to be refused and how long the other uploader's
file waits.

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
STARVATION_TARGET_S = 30.0  # the one-line file refused, and another dataset's upload ready, within this
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


async def _upload(client: httpx.AsyncClient, dataset_id: str, filename: str, data: bytes) -> str:
    answer = await client.post(f"/api/dataset/{dataset_id}/document", files={"file": (filename, data)}, timeout=120)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["data"]["id"])


async def _starvation(client: httpx.AsyncClient) -> dict[str, float]:
    """One uploader sends the 50 MiB one-line file and a 1,500-page PDF (a minute of parsing),
    another a small file right after: seconds until the line is refused (from its upload) and
    until the small file is ready (from its own); the PDF is cancelled afterwards."""
    datasets = [(await client.post("/api/dataset", json={"name": name})).json()["data"]["id"] for name in ("甲", "乙")]
    attacker, other = datasets
    started = time.perf_counter()
    line = await _upload(client, attacker, "一行.txt", hostile.txt_one_long_line())
    pdf = await _upload(client, attacker, "长报告.pdf", documents.big_pdf(1500))
    sent = time.perf_counter()
    small = await _upload(client, other, "值班.md", "# 值班\n\n值班人员每两小时巡查一次并记录。".encode())
    assert (await _settled(client, other, small))["status"] == "ready"
    small_seconds = time.perf_counter() - sent
    assert (await _settled(client, attacker, line))["status"] == "failed"
    line_seconds = time.perf_counter() - started
    await client.put(f"/api/dataset/{attacker}/document/{pdf}/cancel_task", json={"type": 1})
    await _settled(client, attacker, pdf)
    return {"line_refused_seconds": line_seconds, "other_ready_seconds": small_seconds}


def _split_seconds() -> float:
    """The 50 MiB line split whole in this process, the limits lifted (it took minutes)."""
    from services.retrieval.ingestion.splitter import split_document

    text = hostile.txt_one_long_line().decode()
    started = time.perf_counter()
    split_document(text)
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
            starvation = await _starvation(client)
        sampler.cancel()
        alive = os.path.exists(f"/proc/{pid}") and _status_kib(pid, "VmRSS") > 0
        raw = {
            "retrieval_peak_mb": watch.peak_mb(),
            "child_peak_mb": watch.child_peak_kib / 1024,
            "alive": alive,
            "ended": dict(ended),
            "questions": dict(outcomes),
            "cancel_seconds": cancel,
            **starvation,
            "split_seconds": _split_seconds(),
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
        Row(
            SECTION,
            "one line of 50 MiB (.txt) → its document failed at KB_PARSE_MAX_CHARS",
            f"{raw['line_refused_seconds']:.1f} s",
            f"≤ {STARVATION_TARGET_S:.0f} s",
            raw["line_refused_seconds"] <= STARVATION_TARGET_S,
        ),
        Row(
            SECTION,
            "another dataset's small upload, sent after that line and a 1,500-page PDF → ready",
            f"{raw['other_ready_seconds']:.1f} s",
            f"≤ {STARVATION_TARGET_S:.0f} s",
            raw["other_ready_seconds"] <= STARVATION_TARGET_S,
        ),
        Row(SECTION, "the 50 MiB line split whole (limits lifted; it took minutes)", f"{raw['split_seconds']:.1f} s"),
    ]


if __name__ == "__main__":
    run_alone(run)
