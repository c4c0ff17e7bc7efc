"""A chat server of its own over a fresh, empty database, beside a running stack: for tests that
need "no user yet" (the first administrator, the last one) or settings of their own, without
touching the suite's shared database."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2_grpc as chat_grpc
from kbcore.db.engine import create_engine as create_async_db_engine
from kbcore.db.engine import session_factory, sync_url
from kbcore.db.migrate import upgrade
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.rpc.client import open_channel
from kbcore.rpc.stubs import ChatStubs
from kbcore.settings import Settings
from services.chat.server import ChatDeps
from services.chat.server import create_server as create_chat_server
from tests.harness import Stack


@dataclass
class FreshChat:
    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    chat: ChatStubs
    users: chat_grpc.UserServiceStub
    operator: tuple[tuple[str, str], ...]  # the operator token as call metadata

    @property
    def served_settings(self) -> Settings:
        """Its settings naming it as the chat target: what a gateway in front of it is given."""
        return dataclasses.replace(self.settings, chat_target=self.target)

    target: str = ""  # host:port of its gRPC server


def fresh_database_url(folder: Path, suite_url: str) -> tuple[str, str]:
    """A new empty database beside the suite's: (its URL, the PostgreSQL database to drop or "")."""
    if make_url(suite_url).get_backend_name() != "postgresql":
        return f"sqlite:///{folder / f'fresh-{uuid.uuid4().hex[:8]}.sqlite3'}", ""
    name = f"{make_url(suite_url).database}_fresh_{uuid.uuid4().hex[:10]}"
    server = create_engine(sync_url(suite_url), isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    server.dispose()
    return make_url(suite_url).set(database=name).render_as_string(hide_password=False), name


def drop_database(suite_url: str, name: str) -> None:
    server = create_engine(sync_url(suite_url), isolation_level="AUTOCOMMIT")
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    server.dispose()


@contextlib.asynccontextmanager
async def fresh_chat_server(stack: Stack, folder: Path, suite_url: str, **settings: Any) -> AsyncIterator[FreshChat]:
    """A chat server over a fresh database (``settings`` replace the stack's), using the stack's
    context and retrieval services; everything it opened is closed, and the database dropped."""
    url, dropped = fresh_database_url(folder, suite_url)
    await asyncio.to_thread(upgrade, url)
    engine = create_async_db_engine(url)
    own = dataclasses.replace(stack.settings, database_url=url, **settings)
    deps = ChatDeps(
        sessions=session_factory(engine),
        model=stack.chat_deps.model,
        context_channel=open_channel(stack.context_target, stack.credential),
        retrieval_channel=open_channel(stack.retrieval_target, stack.credential),
    )
    server = await create_chat_server(own, deps, port=0)
    channel = open_channel(f"{own.grpc_host}:{server.port}", stack.credential)
    stubs = ChatStubs.of(channel)
    try:
        target = f"{own.grpc_host}:{server.port}"
        yield FreshChat(deps.sessions, own, stubs, stubs.users, bearer(operator_token(own)), target)
    finally:
        await channel.close()
        await server.stop(grace=1)
        await deps.context_channel.close()
        await deps.retrieval_channel.close()
        if deps.endpoints is not None:
            await deps.endpoints.aclose()
        await engine.dispose()
        if dropped:
            drop_database(suite_url, dropped)
