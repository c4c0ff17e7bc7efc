"""``python -m gateway`` announces its port (``KB_RUN_DIR/gateway.port``) only once a connection
to it is accepted: a launcher that reads the port and connects at once must not be refused.
Before, the port was announced as soon as the socket was bound, and the first request of a stack
that started quickly (its demo already loaded) was refused while uvicorn was still starting."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.own_database]  # a process of its own, no database

REPO = Path(__file__).resolve().parents[2]
DEADLINE = 60.0


def test_the_first_connection_after_the_port_is_announced_is_accepted_and_answered(tmp_path: Path) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("KB_")},
        "KB_DATA_DIR": str(tmp_path),
        "KB_RUN_DIR": str(tmp_path),
        "KB_HTTP_PORT": "0",
        "KB_CHAT_TARGET": "127.0.0.1:9",
        "KB_RETRIEVAL_TARGET": "127.0.0.1:9",
        "KB_LOG_LEVEL": "WARNING",
    }
    announced = tmp_path / "gateway.port"
    log = tmp_path / "gateway.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "gateway"], cwd=REPO, env=env, stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + DEADLINE
        while not announced.exists():  # polled tightly: the connection follows the announcement at once
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the gateway never announced its port"
            time.sleep(0.001)
        port = int(announced.read_text())
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # refused before: bound, not listening
        health = httpx.get(f"http://127.0.0.1:{port}/ui/labels.json", timeout=30)
        assert health.status_code == 200, health.text
    finally:
        process.terminate()
        process.wait(timeout=30)
