"""Twelve 49.5 MiB uploads at once against the stack as separate processes (``python -m
tools.stack --ephemeral``), as an attacker sent them (before: the gateway went from 125 to 1,661 MB
and the retrieval service to 2,650 MB, which kept 1.12 GB afterwards; each file was held whole in
both, and nothing limited how many). Now: the gateway stays under 300 MB and the retrieval service
under 800 MB (its checking and parsing children are processes of their own, measured apart);
uploads past the budget are refused at once with 503 and ``Retry-After``, and taken when tried
again after that wait; every document is ready; the retrieval service's memory comes back within
100 MB of where it started; and nothing is left: no share of the budget, no spooled file, no
stored bytes of an ended job.

The budget is the default 256 MiB with one caller allowed all of it (``KB_UPLOAD_CALLER_MB``), so
that the deployment's budget, not one caller's share, is what the burst meets."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from services.retrieval.ingestion.jobs.upload_budget import RETRY_SECONDS, UPLOADS_FULL
from tests.fixtures.big_uploads import BURST_BYTES
from tests.process_stack import stack_processes
from tests.shared_tls import TLS
from tests.upload_burst import (
    MemoryWatch,
    burst_files,
    leftovers,
    rss_mb,
    settled_rss_mb,
    until_ready,
    upload_burst,
)

pytestmark = [pytest.mark.slow, pytest.mark.own_database]  # the stack's SQLite in its data folder

UPLOADS = 12
GATEWAY_MB, RETRIEVAL_MB, BACK_WITHIN_MB = 300, 800, 100


async def test_twelve_large_uploads_at_once_stay_within_memory_and_the_budget_and_leave_nothing(
    tmp_path: Path,
) -> None:
    files = burst_files(tmp_path / "files", UPLOADS, BURST_BYTES, tag="test")
    settings = {"KB_LOG_LEVEL": "WARNING", "KB_UPLOAD_CALLER_MB": "256"}
    (tmp_path / "stack").mkdir()
    with stack_processes(
        tmp_path / "stack", settings, stop=signal.SIGINT, documents=["yunling_shiyan_primary_enrollment_2026.md"]
    ) as stack:
        pids = {name: int(stack.info["pids"][name]) for name in ("gateway", "retrieval")}
        async with httpx.AsyncClient(
            verify=TLS, base_url=stack.info["url"], headers=stack.operator_headers, timeout=600
        ) as client:
            dataset = (await client.post("/api/dataset", json={"name": "上传洪峰"})).json()["data"]["id"]
            start = {name: rss_mb(pid) for name, pid in pids.items()}
            async with MemoryWatch(pids).watching() as watch:
                burst = await upload_burst(client, dataset, files, again=True)
                ready = await until_ready(client, dataset, burst.documents, timeout=600)
            back = await settled_rss_mb(pids["retrieval"], start["retrieval"] + BACK_WITHIN_MB, seconds=30)
        left = leftovers(stack.data_dir)

    first = [answer.status for answer in burst.first]
    refused = [answer for answer in burst.first if answer.status == 503]
    assert set(first) == {200, 503} and len(first) == UPLOADS, first
    assert all(a.retry_after == str(RETRY_SECONDS) and a.message == str(UPLOADS_FULL) for a in refused), refused
    assert len(burst.documents) == UPLOADS, f"{len(burst.documents)} of {UPLOADS} taken in after retrying"
    assert watch.peaks["gateway"] < GATEWAY_MB, watch.peaks
    assert watch.peaks["retrieval"] < RETRIEVAL_MB, watch.peaks
    assert back <= start["retrieval"] + BACK_WITHIN_MB, (
        f"retrieval {start['retrieval']:.0f} MB before, {back:.0f} after"
    )
    assert left == {"shares": 0, "job chunks": 0, "spooled files": 0}, left
    print(
        f"\n{UPLOADS} uploads of {BURST_BYTES / 2**20:.1f} MiB at once: first answers {first.count(200)}×200, "
        f"{len(refused)}×503 (Retry-After {RETRY_SECONDS}); {burst.attempts} attempts until all were taken in "
        f"({burst.seconds_stored:.0f} s), ready {ready:.0f} s later. Peak RSS: gateway {watch.peaks['gateway']:.0f} MB "
        f"(from {start['gateway']:.0f}), retrieval {watch.peaks['retrieval']:.0f} MB (from {start['retrieval']:.0f}; "
        f"its children together {watch.children_peaks['retrieval']:.0f} MB); retrieval after: {back:.0f} MB"
    )
