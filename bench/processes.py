"""The whole stack as separate processes on a throwaway data folder, seeded with the sample
knowledge base, for the benchmarks that measure what a user would see."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from kbcore.db.migrate import upgrade
from kbcore.rpc.caller_token import operator_token
from kbcore.rpc.service_credential import service_credential
from kbcore.settings import Settings
from tools.seed_demo import FIXED_DEMO_IDS, seed_demo
from tools.stack import Stack

ROOT = Path(__file__).resolve().parents[1]


@contextlib.asynccontextmanager
async def announced_process(argv: Sequence[str], what: str) -> AsyncIterator[tuple[subprocess.Popen[bytes], int]]:
    """A helper server in its own process that prints ``PORT <n>`` once it listens (the model
    server, the fake embeddings endpoint); the process and its port. Stopped at the end."""
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        line = await asyncio.to_thread(process.stdout.readline)
        if not line.startswith(b"PORT "):
            raise RuntimeError(f"{what} did not start: {line!r}")
        yield process, int(line.split()[1])
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.asynccontextmanager
async def running_stack(extra_env: Mapping[str, str]) -> AsyncIterator[tuple[dict[str, Any], str]]:
    """Yields the stack's info (url, targets, pids, the operator token, the data folder) and the
    demo application id. Every KB_* variable of the caller's environment is dropped, so a developer's settings
    never leak in."""
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    run_dir = folder / "run"
    run_dir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KB_")}
    env.update(KB_DATA_DIR=str(folder / "data"), KB_RUN_DIR=str(run_dir), KB_LOG_LEVEL="WARNING", **extra_env)
    settings = Settings.from_env(env)
    upgrade(settings.resolved_database_url())
    running = Stack(settings, run_dir, ephemeral=True)
    running.env = env
    try:
        info = await running.start()
        targets = str(info["retrieval_target"]), str(info["chat_target"])
        credential = service_credential(settings)
        seeded = await seed_demo(*targets, operator_token(settings), credential=credential, ids=FIXED_DEMO_IDS)
        info["operator_token"] = operator_token(settings)
        info["data_dir"] = str(settings.data_dir)  # what a section inspects once its work is done
        yield info, seeded.application_id
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)


def operator_headers(info: Mapping[str, Any]) -> dict[str, str]:
    """The ``Authorization`` header of the operator of ``running_stack``'s stack: a loopback
    caller with no credentials is nobody (docs/access.md)."""
    return {"Authorization": f"Bearer {info['operator_token']}"}


def gateway_client(info: Mapping[str, Any], **kwargs: Any) -> httpx.AsyncClient:
    """A client of the stack's gateway that presents the operator token (``timeout`` 120 s
    unless given)."""
    kwargs.setdefault("timeout", 120)
    return httpx.AsyncClient(base_url=str(info["url"]), headers=operator_headers(info), **kwargs)
