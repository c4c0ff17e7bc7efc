"""The retrieval service starts on a disk that is already full (before: opening the embedded
store died of SIGBUS, on tmpfs because an open reads its mapped files whole and a read of a hole
allocates there; the supervisor restarted it five times and searches answered 503 until space
came back).

The local stack runs as processes (``python -m tools.stack --ephemeral``), the vector store's
folder a real 256 MiB tmpfs. A first run loads one sample document and stops; the tmpfs is filled
to the last byte; a second run starts on it. It must serve: the retrieval service stays up (the
same process throughout, never restarted), searches and questions are answered (from a read-only
copy of the store elsewhere), an upload is refused 507. The disk is emptied: with nothing
restarted, a new upload is ingested and found, and the copy is gone. Needs ``mount`` (root); the
test is skipped where mounting is refused, since a separate process cannot be injected into.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from kbcore.errors import DISK_FULL
from services.retrieval.store.shard_space import scratch_name
from tests.document_jobs import hit_test
from tests.eventually import eventually
from tests.full_disk import LATE, a_late_document_is_taken_in, fill, free, mount_tmpfs, unmount
from tests.process_stack import pid_alive, stack_processes
from tests.shared_tls import TLS
from tests.sse_client import parse_frames

pytestmark = [pytest.mark.fault, pytest.mark.slow, pytest.mark.own_database]  # the stack's SQLite

HOSPITAL = ["yunling_hospital_visiting_rules.md"]
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
SETTINGS = {"KB_LOG_LEVEL": "WARNING", "PYTHONUNBUFFERED": "1"}


async def answer(client: httpx.AsyncClient, app_id: str) -> str:
    chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
    asked = await client.post(f"/api/application/chat_message/{chat_id}", json={"message": QUESTION})
    assert asked.status_code == 200, asked.text
    frames = parse_frames(asked.content)
    assert frames[-1].kind != "error" and frames[-1].data.get("is_end") is True, frames[-1].raw
    return "".join(str(f.data.get("content", "")) for f in frames if f.kind == "chunk")


async def test_the_retrieval_service_starts_on_a_full_disk_serves_searches_and_takes_writes_when_space_is_back(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    where = data / "qdrant-edge"  # the store's folder under KB_DATA_DIR
    if not mount_tmpfs(where, "256m"):
        pytest.skip("mounting a tmpfs is refused on this machine; a separate process cannot be injected into")
    copy = Path(tempfile.gettempdir()) / scratch_name(where)
    try:
        with stack_processes(data, SETTINGS, documents=HOSPITAL):
            pass  # loaded, then stopped
        filler = fill(where)
        assert free(where) == 0
        for leftover in ("run", "documents"):  # the first run's; the second makes its own
            shutil.rmtree(data / leftover)
        with stack_processes(data, SETTINGS, documents=HOSPITAL) as stack:
            info = stack.info
            pid = int(info["pids"]["retrieval"])
            dataset, app = str(info["dataset_id"]), str(info["application_id"])
            async with httpx.AsyncClient(
                verify=TLS, base_url=str(info["url"]), headers=stack.operator_headers, timeout=60
            ) as client:
                assert copy.is_dir(), "the store is not served from a read-only copy"
                assert any("16:00" in h["content"] for h in await hit_test(client, dataset, "ICU探视时间")), "no search"
                assert "16:00" in await answer(client, app)
                refused = await client.post(
                    f"/api/dataset/{dataset}/document", json={"name": "消防", "paragraphs": LATE}
                )
                assert refused.status_code == 507, refused.text
                assert refused.json()["message"] == str(DISK_FULL)

                filler.unlink()
                back = time.monotonic()
                await eventually(  # the disk watch moves the store back within a second or so
                    lambda: not copy.exists(), timeout=20, interval=0.1, what="the store moving back from its copy"
                )
                moved_back = time.monotonic() - back
                await a_late_document_is_taken_in(client, dataset)
                assert any("16:00" in h["content"] for h in await hit_test(client, dataset, "ICU探视时间"))
            assert pid_alive(pid) and int(stack.info["pids"]["retrieval"]) == pid, "the retrieval service restarted"
            restarts = stack.info.get("restarts", {}).get("retrieval", 0)
            assert restarts == 0, f"the retrieval service was restarted {restarts} times"
    finally:
        unmount(where)
        shutil.rmtree(copy, ignore_errors=True)
    print(
        f"\nstarted on a full disk (a real 256 MiB tmpfs, 0 bytes free): retrieval pid {pid} up, searches and a "
        f"question answered from a read-only copy, upload 507; space back: store moved back in {moved_back:.1f} s, "
        "a new upload ingested and found, no restart"
    )
