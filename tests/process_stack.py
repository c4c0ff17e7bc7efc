"""The local stack as separate processes (``python -m tools.stack --ephemeral``, the ``make run``
launcher, every port 0) for the end-to-end tests that need real processes: started in its own
data folder, waited for until it announces itself in ``KB_RUN_DIR/stack.json``, stopped at the
end with a signal the launcher passes on, so no service is left behind."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE
from tests.eventually import eventually_sync, passed
from tests.harness import READS_ENGLISH
from tools.seed_demo import SAMPLE_DOCS

REPO = Path(__file__).resolve().parents[1]
START_LIMIT = 240.0  # seconds: seeding the demo knowledge base on a loaded machine


def sample_documents(folder: Path, names: Sequence[str]) -> Path:
    """``folder``, made to hold copies of the named sample documents only: a stack whose tests
    ask about one or two of them loads those (embedding all sixteen is most of a stack's start)."""
    folder.mkdir()
    for name in names:
        shutil.copy(SAMPLE_DOCS / name, folder / name)
    return folder


@dataclass
class StackProcesses:
    process: subprocess.Popen[bytes]
    data_dir: Path
    run_dir: Path
    log: Path  # every process's output
    operator_token: str  # what a client presents to be the operator (a loopback caller without one is nobody)

    @property
    def operator_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.operator_token}", **READS_ENGLISH}

    @property
    def info(self) -> dict[str, Any]:
        """What the launcher announced: addresses, pids, the demo's ids."""
        info: dict[str, Any] = json.loads((self.run_dir / "stack.json").read_text())
        return info


@contextlib.contextmanager
def stack_processes(
    data_dir: Path,
    settings: Mapping[str, str],
    *,
    dropped: tuple[str, ...] = ("KB_",),
    stop: signal.Signals = signal.SIGTERM,
    documents: Sequence[str] = (),
) -> Iterator[StackProcesses]:
    """The running stack with ``settings`` over this environment, from which the variables
    starting with ``dropped`` are left out (the test run's own settings are not the stack's);
    the demo dataset holds the sample ``documents`` named, or all of them."""
    run_dir = data_dir / "run"
    run_dir.mkdir()
    log = data_dir / "stack.log"
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env = {**inherited, "KB_DATA_DIR": str(data_dir), "KB_RUN_DIR": str(run_dir), **settings}
    argv = [sys.executable, "-m", "tools.stack", "--ephemeral"]
    if documents:
        argv += ["--documents", str(sample_documents(data_dir / "documents", documents))]
    with log.open("wb") as out:
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=out)
    try:

        def announced() -> bool:
            if process.poll() is not None:
                pytest.fail("the stack exited while starting:\n" + log.read_text(errors="replace"))
            return (run_dir / "stack.json").exists()

        try:
            eventually_sync(announced, timeout=START_LIMIT, interval=0.05, what="the stack announcing itself")
        except AssertionError as late:
            raise AssertionError(f"{late}:\n{log.read_text(errors='replace')}") from None
        token = env.get("KB_ADMIN_TOKEN") or (Path(env["KB_DATA_DIR"]) / LOCAL_TOKEN_FILE).read_text().strip()
        yield StackProcesses(process, data_dir, run_dir, log, token)
    finally:
        if process.poll() is None:
            process.send_signal(stop)
            process.wait(timeout=60)


def listening_port(
    process: subprocess.Popen[bytes], port_file: Path, *, timeout: float, output: Callable[[], str] = lambda: ""
) -> int:
    """The port a server process announces in ``port_file``, once it accepts connections there
    (the file is written before the server listens); fails at once if the process exits, and
    either way with its ``output``."""

    def listening() -> int:
        if process.poll() is not None:
            pytest.fail(f"{port_file.stem} exited while starting:\n{output()}")
        try:
            port = int(port_file.read_text())
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except (OSError, ValueError) as not_yet:
            raise AssertionError(f"not listening yet: {not_yet}") from not_yet
        return port

    try:
        return eventually_sync(listening, passed, timeout=timeout, interval=0.05, what=f"{port_file.stem} listening")
    except AssertionError as late:
        raise AssertionError(f"{late}:\n{output()}") from None


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process: gone, or a zombie nobody has reaped yet, is not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def child_pids(pid: int) -> list[int]:
    """The processes ``pid`` started, by any of its threads (as /proc lists them; a thread that
    ends meanwhile is skipped)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return found
