"""Registered embedding models as embedders: read from the shared ``model_endpoint``
table through ``kbcore.models.endpoints.read_endpoint`` (the path every service reads a
registered model by), the API key opened with the shared secret.

A model chosen for a dataset is checked once, when it is chosen: registered, registered as an
embedding model, and answering — one small real call, which also tells the size of its
vectors, recorded with the dataset. Messages never contain the API key.
"""

from __future__ import annotations

import openai
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ModelEndpoint
from kbcore.errors import CorruptData, InvalidRequest, NotFound
from kbcore.models.endpoints import read_endpoint
from kbcore.models.http_transport import model_http_client
from kbcore.models.scrub import shown
from kbcore.secret_box import SecretBox
from kbcore.settings import Settings
from kbcore.words.said import said
from services.retrieval.embedding.embedders import Embedder, OpenAIEmbedder

EMBEDDING_PURPOSE = "embedding"
PROBE_TEXT = "dimension probe"
PROBE_TIMEOUT = 30.0


class EmbeddingModels:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], settings: Settings) -> None:
        self._sessions = sessions
        self._settings = settings
        self._box: SecretBox | None = None

    async def require(self, model_id: str) -> ModelEndpoint:
        """The registered embedding model; InvalidRequest, in words, for anything else."""
        row = await read_endpoint(self._sessions, model_id)
        if row is None:
            raise InvalidRequest(said("embedding_model_not_registered_register_under", model_id=f"{model_id!r}"))
        if row.purpose != EMBEDDING_PURPOSE:
            raise InvalidRequest(
                said("model_registered_model_not_embedding_model", row_name=f"{row.name!r}", row_purpose=row.purpose)
            )
        return row

    def _api_key(self, row: ModelEndpoint) -> str:
        if self._box is None:
            self._box = SecretBox.from_settings(self._settings)
        try:
            return self._box.open(row.api_key_sealed)
        except CorruptData as exc:
            raise InvalidRequest(said("embedding_model", row_name=f"{row.name!r}", exc=exc)) from None

    async def probe_dimension(self, model_id: str) -> int:
        """The size of the model's vectors, from one real call; InvalidRequest when it does not answer."""
        row = await self.require(model_id)
        api_key = self._api_key(row)
        client = openai.AsyncOpenAI(
            base_url=row.base_url,
            api_key=api_key or "unused",
            timeout=PROBE_TIMEOUT,
            max_retries=0,
            http_client=model_http_client(),
        )
        try:
            reply = await client.embeddings.create(model=row.model, input=[PROBE_TEXT], encoding_format="float")
            dimension = len(reply.data[0].embedding) if reply.data else 0
        except openai.APIError as exc:
            reason = shown(str(exc), api_key)
            raise InvalidRequest(
                said("embedding_model_did_not_answer_embeddings", row_name=f"{row.name!r}", exc=reason)
            ) from None
        finally:
            await client.close()
        if dimension <= 0:
            raise InvalidRequest(said("embedding_model_answered_without_vector", row_name=f"{row.name!r}"))
        return dimension

    async def current(self, model_id: str) -> ModelEndpoint:
        """The model's row as it is now. A model deleted since is NOT_FOUND: its datasets cannot be
        searched until given another model (deleting a model datasets use is refused)."""
        row = await read_endpoint(self._sessions, model_id)
        if row is None:
            raise NotFound(said("embedding_model_no_longer_registered_give", model_id=model_id))
        return row

    def embedder(self, row: ModelEndpoint, dimension: int) -> Embedder:
        """The model's embedder for vectors of ``dimension`` (what its datasets recorded)."""
        return OpenAIEmbedder(
            base_url=row.base_url,
            api_key=self._api_key(row) or None,
            model=row.model,
            dimension=dimension,
            timeout=self._settings.model_timeout,
            batch_size=self._settings.embedding_batch,
            concurrency=self._settings.embedding_concurrency,
        )
