"""The embedded vector store's disk fills up during an ingestion (found by an attacker: the
retrieval service died of SIGBUS, since the store maps its files and a mapped write to a full
filesystem is a signal, not an error, and it could not start again until space came back).

The store lives on a real 256 MiB tmpfs (``mount -t tmpfs``, as root; the SQLite file stays on
the ordinary disk). A 400-paragraph document is uploaded; once its first batch is stored the
disk is filled to half the reserve (``KB_DISK_RESERVE_MB``, 64 MiB: the margin a write that
already passed the check still has), and once the job has failed, to the last byte. Then:
searches and questions are answered, the job reads ``failed`` with the sentence, a new upload is
refused 507 at once; the failed job's staged points wait. The disk is emptied: they are dropped,
and a new upload is ingested and found, with nothing restarted. Where mounting is refused, the
store's ``statvfs`` is injected instead; the test prints which it used.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kbcore.errors import DISK_FULL
from kbcore.process.disk_space import MiB
from services.retrieval.store.edge_store import DEFAULT_RESERVE_BYTES, EdgeVectorStore
from tests.document_jobs import hit_test, wait_for_documents
from tests.e2e.private_stack import Seeded, private_stack
from tests.eventually import eventually
from tests.full_disk import LATE, InjectedDisk, RealDisk, a_late_document_is_taken_in, mount_tmpfs, unmount
from tests.sse_client import parse_frames

pytestmark = [pytest.mark.fault, pytest.mark.own_database]  # a stack of its own, its SQLite file

QUESTION = "重症医学科每天的探视时间是几点？"
BIG = [
    {"title": f"设备{i}号", "content": f"设备{i}号的巡检周期为{i % 30 + 1}天，由第{i % 7 + 1}组负责。"}
    for i in range(400)
]
SETTLE = 10.0  # seconds: the disk watch looks every second


@pytest.fixture
async def store_on_small_disk(
    tmp_path: Path, embedder: Any, offline_model: Any, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Seeded, RealDisk | InjectedDisk]]:
    folder = tmp_path / "data"
    where = folder / "edge"  # the store's folder (private_stack's layout) is the tmpfs itself
    mounted = mount_tmpfs(where, "256m")
    disk = RealDisk(where, "256 MiB") if mounted else InjectedDisk(where, monkeypatch)
    try:
        async with private_stack(folder, embedder=embedder, model=offline_model) as seeded:
            yield seeded, disk
    finally:
        if mounted:
            unmount(where)


async def document(client: httpx.AsyncClient, dataset_id: str, document_id: str) -> dict[str, Any]:
    answer = await client.get(f"/api/dataset/{dataset_id}/document/{document_id}")
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()["data"]
    return data


async def answered(client: httpx.AsyncClient, app_id: str) -> bool:
    chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
    answer = await client.post(f"/api/application/chat_message/{chat_id}", json={"message": QUESTION})
    assert answer.status_code == 200, answer.text
    last = parse_frames(answer.content)[-1]
    return last.kind != "error" and last.data.get("is_end") is True and "16:00" in answer.content.decode()


async def test_a_disk_that_fills_during_an_ingestion_refuses_writes_keeps_answering_and_recovers_by_itself(
    store_on_small_disk: tuple[Seeded, RealDisk | InjectedDisk],
) -> None:
    seeded, disk = store_on_small_disk
    deps = seeded.stack.service_deps
    assert deps is not None and isinstance(deps[0].store, EdgeVectorStore)
    store = deps[0].store
    dataset = seeded.dataset_id
    async with seeded.stack.http() as client:
        big = await client.post(f"/api/dataset/{dataset}/document", json={"name": "设备巡检", "paragraphs": BIG})
        assert big.status_code == 200, big.text
        big_id = big.json()["data"]["id"]

        async def stored() -> int:
            return int((await document(client, dataset, big_id))["progress"]["done"])

        await eventually(stored, timeout=120, interval=0.1, what="the big document's first batch stored")
        disk.fill(leave=DEFAULT_RESERVE_BYTES // 2)
        [failed] = await wait_for_documents(client, dataset, [big_id])
        assert failed["status"] == "failed" and failed["error"] == str(DISK_FULL), failed
        staged = await store.count(dataset, big_id)
        assert 0 < staged < len(BIG), f"{staged} points staged before the disk filled"
        disk.fill(leave=0)  # nothing writes any more: the last byte too

        # Alive, and everything that only reads still works.
        assert any(h["document_id"] == seeded.document_id for h in await hit_test(client, dataset, "探视时间"))
        assert not any(h["document_id"] == big_id for h in await hit_test(client, dataset, "设备3号的巡检周期"))
        assert await answered(client, seeded.app_id), "a question was not answered on the full disk"
        refused = await client.post(f"/api/dataset/{dataset}/document", json={"name": "消防", "paragraphs": LATE})
        assert refused.status_code == 507, refused.text
        assert refused.json() == {"code": 507, "message": str(DISK_FULL), "data": None}
        assert await store.count(dataset, big_id) == staged, "the failed version's points wait for room"

        disk.empty()
        back = time.monotonic()

        await eventually(
            lambda: store.count(dataset, big_id),
            lambda staged: staged == 0,
            timeout=SETTLE,
            interval=0.1,
            what="the failed version's staged points dropped once space was back",
        )
        settled = time.monotonic() - back
        await a_late_document_is_taken_in(client, dataset)
        assert await answered(client, seeded.app_id)
    assert not store.read_only
    print(
        f"\nstore disk full during ingestion ({disk.method}; pid {os.getpid()} alive): job failed with "
        f"{str(DISK_FULL)!r} after {staged} of {len(BIG)} points staged, searches and questions answered, upload 507; "
        f"space back: staged points dropped within {settled:.1f} s, a new upload ingested and found "
        f"(reserve {DEFAULT_RESERVE_BYTES // MiB} MiB)"
    )
