"""A stack of its own for tests that break things (fuzzing deletes what it finds, a full disk
refuses every write): its own data folder, SQLite file and vector store, so the session's
``stack`` and the sample knowledge base are never touched. It holds one small dataset, one
application on it, an API key and a share link for that application."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbcore.db.engine import create_engine as create_async_db_engine
from kbcore.db.engine import session_factory
from kbcore.db.migrate import upgrade
from kbcore.settings import Settings
from services.retrieval.store.factory import open_vector_store
from tests.document_jobs import wait_for_documents
from tests.harness import Stack, start_stack

PARAGRAPHS = [
    {"title": "探视时间", "content": "重症医学科每日安排一次探视，时间为16:00至16:30，每次限一人。"},
    {"title": "住院报销", "content": "城乡居民医保参保人在县级定点医院住院，政策范围内报销比例为80%。"},
]


@dataclass
class Seeded:
    stack: Stack
    sessions: Any
    dataset_id: str
    document_id: str
    app_id: str
    api_key: str
    access_token: str


@asynccontextmanager
async def private_stack(
    folder: Path, *, embedder: Any, model: Any, database: Path | None = None, lock_ttl: float = 30.0, **overrides: Any
) -> AsyncIterator[Seeded]:
    """Start a stack on ``folder`` (the SQLite file at ``database`` when given: a small tmpfs),
    with ``overrides`` (Settings fields) over the defaults, and seed it over HTTP as the operator
    (its token)."""
    url = f"sqlite:///{database or folder / 'kb.sqlite3'}"
    upgrade(url)
    settings = dataclasses.replace(
        Settings(data_dir=folder, database_url=url, context_port=0, retrieval_port=0, chat_port=0),
        lock_ttl=lock_ttl,
        **overrides,
    )
    engine = create_async_db_engine(url)
    store = await open_vector_store(
        qdrant_url=None, qdrant_api_key=None, edge_path=folder / "edge", dimension=embedder.dimension
    )
    running = await start_stack(settings, sessions=session_factory(engine), store=store, embedder=embedder, model=model)
    try:
        yield await _seed(running, session_factory(engine))
    finally:
        await running.stop()
        await store.close()
        await engine.dispose()


async def _seed(running: Stack, sessions: Any) -> Seeded:
    async with running.http() as client:
        dataset = await client.post("/api/dataset", json={"name": "私有资料"})
        assert dataset.status_code == 200, dataset.text
        dataset_id = str(dataset.json()["data"]["id"])
        document = await client.post(
            f"/api/dataset/{dataset_id}/document", json={"name": "医院规定", "paragraphs": PARAGRAPHS}
        )
        assert document.status_code == 200, document.text
        listed = await wait_for_documents(client, dataset_id)  # an upload is queued; chats need it ready
        assert [d["status"] for d in listed] == ["ready"], listed
        app = await client.post("/api/application", json={"name": "私有应用", "dataset_id_list": [dataset_id]})
        assert app.status_code == 200, app.text
        app_id = str(app.json()["data"]["id"])
        key = await client.post(f"/api/application/{app_id}/api_key")
        assert key.status_code == 200, key.text
        link = await client.post(f"/api/application/{app_id}/access_token", json={"access_num": 1000})
        assert link.status_code == 200, link.text
    secret = str(key.json()["data"]["secret_key"])
    return Seeded(
        running, sessions, dataset_id, str(listed[0]["id"]), app_id, secret, str(link.json()["data"]["access_token"])
    )
