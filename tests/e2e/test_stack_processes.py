"""The README's `make run` path: every service a separate process (`python -m tools.stack
--ephemeral`, all on port 0), one compound question through HTTP, then a graceful stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.process_stack import stack_processes
from tests.sse_client import answer_text, parse_frames
from tools.demo_ids import DEMO_IDS_FILE
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

QUESTION = "云岭县实验小学2026年一年级新生网上报名是哪几天？县图书馆成人读者证的借期是多少天？"


@pytest.fixture(scope="module")
def process_stack(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, object], subprocess.Popen[bytes]]]:
    settings = {"KB_LOG_LEVEL": "WARNING"}
    # The two documents the question is about (seeding all sixteen is the same code, and the
    # in-process stack of the suite does it); the whole environment passed on, KB_ settings included.
    documents = ["yunling_shiyan_primary_enrollment_2026.md", "yunling_library_rules.md"]
    data_dir = tmp_path_factory.mktemp("stack-data")
    with stack_processes(data_dir, settings, dropped=(), stop=signal.SIGINT, documents=documents) as stack:
        yield {**stack.info, "data_dir": str(stack.data_dir)}, stack.process


def test_compound_question_through_separate_processes(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    info, _ = process_stack
    url, app = str(info["url"]), str(info["application_id"])
    with httpx.Client(base_url=url, timeout=120) as client:
        chat_id = client.get(f"/api/application/{app}/chat/open").json()["data"]
        with client.stream(
            "POST", f"/api/application/chat_message/{chat_id}", json={"message": QUESTION, "progress": "named"}
        ) as response:
            assert response.status_code == 200
            frames = parse_frames(response.read())
        phases = [f.data["phase"] for f in frames if f.kind == "progress"]
        assert {"context", "retrieving", "assessed", "generating"} <= set(phases)
        assert frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True
        answer = answer_text(frames)
        assert "6月8日" in answer and "28天" in answer
        record_id = frames[-1].data["chat_record_id"]
        record = client.get(f"/api/application/{app}/chat/{chat_id}/chat_record/{record_id}").json()["data"]
        assert record["agent_trace"] and record["agent_stop_reason"] and record["context_info"]["enabled"] is True


def test_make_run_seeds_the_demo_under_random_ids_kept_in_the_data_folder(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    """No guessable (uuid5) demo ids for a forged request to aim at; the ids drawn
    are stored in the data folder, so a restart seeds the same application again."""
    info, _ = process_stack
    assert info["application_id"] != DEMO_APPLICATION_ID and info["dataset_id"] != DEMO_DATASET_ID
    stored = json.loads((Path(str(info["data_dir"])) / DEMO_IDS_FILE).read_text())
    assert stored == {"dataset_id": info["dataset_id"], "application_id": info["application_id"]}


def test_sigterm_stops_every_process_gracefully(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    info, process = process_stack
    pids: dict[str, int] = info["pids"]  # type: ignore[assignment]
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 0
    for name, pid in pids.items():
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)  # gone, not left behind
        assert name
