"""The whole stack as separate processes on a throwaway data folder, seeded with the sample
knowledge base, for the benchmarks that measure what a user would see."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from kbcore.caller_token import operator_token
from kbcore.db.migrate import upgrade
from kbcore.settings import Settings
from tools.seed_demo import FIXED_DEMO_IDS, seed_demo
from tools.stack import Stack


@contextlib.asynccontextmanager
async def running_stack(extra_env: Mapping[str, str]) -> AsyncIterator[tuple[dict[str, Any], str]]:
    """Yields the stack's info (url, targets, pids) and the demo application id. Every KB_*
    variable of the caller's environment is dropped, so a developer's settings never leak in."""
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
        seeded = await seed_demo(*targets, operator_token(settings), ids=FIXED_DEMO_IDS)
        yield info, seeded.application_id
    finally:
        running.stop()
        shutil.rmtree(folder, ignore_errors=True)
