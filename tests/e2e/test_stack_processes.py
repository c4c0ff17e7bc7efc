"""The README's `make run` path: every service a separate process (`python -m tools.stack
--ephemeral`, all on port 0), the banner's one-time sign-in link for the first administrator, one
compound question through HTTP as the operator, then a graceful stop."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fresh_chat import drop_database, fresh_database_url
from tests.harness import READS_ENGLISH
from tests.process_stack import stack_processes
from tests.shared_tls import TLS
from tests.sse_client import answer_text, parse_frames
from tools.demo_ids import DEMO_IDS_FILE
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

REPO = Path(__file__).resolve().parents[2]
QUESTION = "云岭县实验小学2026年一年级新生网上报名是哪几天？县图书馆成人读者证的借期是多少天？"


@pytest.fixture(scope="module")
def process_stack(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, object], subprocess.Popen[bytes]]]:
    settings = {"KB_LOG_LEVEL": "WARNING", "KB_HTTP_DOCS": "false"}
    # The two documents the question is about (seeding all sixteen is the same code, and the
    # in-process stack of the suite does it); the whole environment passed on, KB_ settings included.
    documents = ["yunling_shiyan_primary_enrollment_2026.md", "yunling_library_rules.md"]
    data_dir = tmp_path_factory.mktemp("stack-data")
    data_dir.chmod(0o755)  # as a folder made by hand (or by an earlier release) is: the services close it
    # A first start is a first start on PostgreSQL too: a new empty database (the suite's has
    # users already), dropped afterwards. On SQLite the data folder's file is new anyway.
    suite_url = os.environ.get("KB_DATABASE_URL", "")
    fresh_url, dropped_database = fresh_database_url(data_dir, suite_url) if suite_url else ("", "")
    if fresh_url:
        settings["KB_DATABASE_URL"] = fresh_url
    try:
        with stack_processes(data_dir, settings, dropped=(), stop=signal.SIGINT, documents=documents) as stack:
            extra = {"data_dir": str(stack.data_dir), "log": str(stack.log), "operator_headers": stack.operator_headers}
            extra["database_url"] = fresh_url
            yield {**stack.info, **extra}, stack.process
    finally:
        if dropped_database:
            drop_database(suite_url, dropped_database)


def test_compound_question_through_separate_processes(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    info, _ = process_stack
    url, app = str(info["url"]), str(info["application_id"])
    headers: dict[str, str] = info["operator_headers"]  # type: ignore[assignment]
    with httpx.Client(verify=TLS, base_url=url, headers=headers, timeout=120) as client:
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


def test_the_first_start_prints_a_one_time_sign_in_link_for_admin_and_only_pages_that_answer(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    info, _ = process_stack
    url = str(info["url"])
    banner = Path(str(info["log"])).read_text(errors="replace")
    [code] = re.findall(re.escape(f"{url}/ui/admin#signin=") + r"([\w-]+)", banner)
    assert f"{url}/docs" not in banner, "KB_HTTP_DOCS is off: /docs answers 404"
    assert f"TOKEN=$(cat {Path(str(info['data_dir'])) / 'operator.token'})" in banner
    with httpx.Client(verify=TLS, base_url=url, timeout=60, headers=READS_ENGLISH) as client:
        assert client.get("/docs").status_code == 404
        assert client.get("/api/dataset").status_code == 401, "no token: nobody, not the operator"
        signed_in = client.post("/api/user/signin_link", json={"code": code})
        assert signed_in.status_code == 200, signed_in.text
        me = client.get("/api/user", headers={"Authorization": f"Bearer {signed_in.json()['data']}"}).json()["data"]
        assert (me["username"], me["role"]) == ("admin", "admin") and not me["has_password"], me
        again = client.post("/api/user/signin_link", json={"code": code})
        assert again.status_code == 401 and "used already" in again.json()["message"], again.text


def test_tools_signin_link_prints_a_new_link_that_signs_admin_in(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    """Once the banner's link is used up: ``python -m tools.signin_link`` on the same data, its
    link at the address the settings name (the gateway's port, or ``KB_PUBLIC_URL``) and on the
    audit trail as the tool's."""
    info, _ = process_stack
    url = str(info["url"])
    env = {**os.environ, "KB_DATA_DIR": str(info["data_dir"]), "KB_LOG_LEVEL": "WARNING"}
    env.pop("KB_PUBLIC_URL", None)
    if info["database_url"]:
        env["KB_DATABASE_URL"] = str(info["database_url"])
    port = url.rsplit(":", 1)[1]
    printed = []
    for settings in ({"KB_HTTP_PORT": port}, {"KB_PUBLIC_URL": "https://kb.example.com/"}):
        made = subprocess.run(
            [sys.executable, "-m", "tools.signin_link"],
            cwd=REPO,
            env={**env, **settings},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert made.returncode == 0, made.stderr
        printed.append(made.stdout)
    [code] = re.findall(rf"\s{re.escape(url)}/ui/admin#signin=([\w-]+)\n", printed[0])
    assert re.search(r"\shttps://kb\.example\.com/ui/admin#signin=[\w-]+\n", printed[1]), printed[1]
    headers: dict[str, str] = info["operator_headers"]  # type: ignore[assignment]
    with httpx.Client(verify=TLS, base_url=url, timeout=60, headers=READS_ENGLISH) as client:
        signed_in = client.post("/api/user/signin_link", json={"code": code})
        trail = client.get("/api/audit", params={"action": "user.create_sign_in_link"}, headers=headers)
    assert signed_in.status_code == 200 and signed_in.json()["data"].startswith("kbs_"), signed_in.text
    rows = trail.json()["data"]["records"]
    assert [(r["actor_kind"], r["actor"]) for r in rows].count(("service", "tools.signin_link")) == 2, rows
    nobody = subprocess.run(
        [sys.executable, "-m", "tools.signin_link", "nobody"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert nobody.returncode == 1 and "'nobody' is no user" in nobody.stderr


def test_the_data_folder_and_the_database_with_its_wal_are_readable_by_the_services_user_only(
    process_stack: tuple[dict[str, object], subprocess.Popen[bytes]],
) -> None:
    info, _ = process_stack
    data_dir = Path(str(info["data_dir"]))
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    database = [data_dir / name for name in ("kb.sqlite3", "kb.sqlite3-wal", "kb.sqlite3-shm")]
    present = [path for path in database if path.exists()]
    if not info["database_url"]:  # SQLite: the stack has written to it
        assert database[0] in present
    assert {path.name: stat.S_IMODE(path.stat().st_mode) for path in present} == {p.name: 0o600 for p in present}


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
