"""Model endpoints the operator registered, as clients the services call.

The chat service answers with an application's chat model; retrieval and context make the
auxiliary calls with the model the request names. Each process reads the ``model_endpoint``
row from the shared database, opens its API key with the shared secret (``kbcore.secret_box``)
and keeps one client per endpoint, rebuilt when the row changes (its ``updated_at``). A client
replaced that way is closed once no question can still be using it (after ``ask_timeout``),
so an answer streaming while the operator edits the endpoint is not cut.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ModelEndpoint
from kbcore.errors import NotFound
from kbcore.models.base import ModelClient
from kbcore.models.factory import create_model_client
from kbcore.models.providers import PROFILES
from kbcore.secret_box import SecretBox
from kbcore.settings import Settings
from kbcore.words.said import said

PROVIDERS = tuple(PROFILES)  # openai, deepseek, dashscope, vllm, sglang, ollama, generic
PURPOSES = ("chat", "auxiliary", "embedding", "rerank")
# Purposes an application may pick for each of its two model slots.
CHAT_PURPOSES = frozenset({"chat"})
AUX_PURPOSES = frozenset({"chat", "auxiliary"})


def endpoint_client(row: ModelEndpoint, api_key: str, settings: Settings) -> ModelClient:
    """A client for one registered endpoint: its model does both the answers and the auxiliary jobs."""
    return create_model_client(
        base_url=row.base_url,
        api_key=api_key or None,
        chat_model=row.model,
        aux_model=row.model,
        timeout=settings.model_timeout,
        disable_thinking=settings.disable_thinking,
        provider=row.provider,  # its profile says how to ask for no thinking, and what else it accepts
    )


async def read_endpoint(sessions: async_sessionmaker[AsyncSession], endpoint_id: str) -> ModelEndpoint | None:
    """The registered endpoint's row as it is now (every process reads the same shared table)."""
    async with sessions() as session:
        return await session.get(ModelEndpoint, endpoint_id)


@dataclass
class _Cached:
    version: dt.datetime
    client: ModelClient


@dataclass
class EndpointClients:
    """One client per registered endpoint. "No choice" (an empty id) is each caller's own
    default — the retrieval service's is wrapped with its evidence matcher — so it is decided
    there, not here."""

    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    _box: SecretBox | None = None
    _clients: dict[str, _Cached] = field(default_factory=dict)
    _closing: set[asyncio.Task[None]] = field(default_factory=set)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def client(self, endpoint_id: str) -> ModelClient:
        """The endpoint's client. An id that names no endpoint (deleted between the choice and
        the question) is NOT_FOUND, in words."""
        row = await read_endpoint(self.sessions, endpoint_id)
        if row is None:
            raise NotFound(said("model_not_registered_deleted_choose_another", endpoint_id=endpoint_id))
        async with self._lock:
            cached = self._clients.get(endpoint_id)
            if cached is not None and cached.version == row.updated_at:
                return cached.client
            if self._box is None:
                self._box = SecretBox.from_settings(self.settings)
            client = endpoint_client(row, self._box.open(row.api_key_sealed), self.settings)
            self._clients[endpoint_id] = _Cached(row.updated_at, client)
        if cached is not None:
            self._close_later(cached.client)
        return client

    def _close_later(self, client: ModelClient) -> None:
        async def close() -> None:
            try:
                await asyncio.sleep(self.settings.ask_timeout)
            finally:  # at once when the service shuts down
                await client.aclose()

        task = asyncio.create_task(close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Every endpoint's client, the replaced ones waiting to close included (the default
        belongs to whoever made it)."""
        for task in list(self._closing):
            task.cancel()
        await asyncio.gather(*self._closing, return_exceptions=True)
        clients = [c.client for c in self._clients.values()]
        self._clients.clear()
        for client in clients:
            await client.aclose()
