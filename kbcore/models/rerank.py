"""Calls to a registered rerank endpoint in the common ``/rerank`` shape.

Two shapes are served under that path. Cohere, Jina, vLLM and Xinference take
``{model, query, documents, top_n}`` and answer ``{results: [{index, relevance_score}]}``;
Hugging Face's text-embeddings-inference (TEI) takes ``{query, texts}`` and answers
``[{index, score}]``. The first is sent; an endpoint answering 422 (TEI's answer to a body
without ``texts``) is asked once more in TEI's shape, and remembered as a TEI endpoint. Either
reply is read.

Any failure is a ``RerankError``: the retrieval loop then keeps the search's own order and says
why in the round's trace, it never fails the question. A model that is not registered or not a
reranker is named in words; a failure of the endpoint itself (no answer in time, an error status,
a reply in neither shape) is its kind's fixed sentence (``kbcore.models.failures``), because the
trace is part of the record a visitor reads: the endpoint's address and words go to the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ModelEndpoint
from kbcore.errors import CorruptData
from kbcore.metrics.catalog import ModelCall, Purpose
from kbcore.models.failures import FailureKind, reported, status_kind
from kbcore.secret_box import SecretBox
from kbcore.settings import Settings

RERANK_TIMEOUT = 10.0
RERANK_PURPOSE = "rerank"


class RerankError(Exception):
    """Why a rerank call gave no order, in words that never contain the API key nor the endpoint's."""


def _failed(kind: FailureKind, row: ModelEndpoint, detail: str, api_key: str) -> RerankError:
    """The endpoint's failure: logged with the model and where it is, raised as the kind's sentence."""
    return RerankError(reported(kind, f"rerank with model {row.name!r} at {_host(row.base_url)}: {detail}", api_key))


@dataclass(frozen=True)
class Ranked:
    """One document of the call, by its index in the documents sent, and its rerank score."""

    index: int
    score: float


@dataclass
class RerankEndpoints:
    """Rerank calls to the endpoint an application names, read from ``model_endpoint`` at each
    call (one small query: an edit or a deletion takes effect on the next round)."""

    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    timeout: float = RERANK_TIMEOUT
    _http: httpx.AsyncClient = field(default_factory=httpx.AsyncClient)
    _box: SecretBox | None = None
    _tei: set[str] = field(default_factory=set)  # base URLs that answered only TEI's shape

    async def rerank(self, endpoint_id: str, query: str, documents: Sequence[str]) -> list[Ranked]:
        """Every document's score, best first."""
        row, api_key = await self._endpoint(endpoint_id)
        try:
            with ModelCall(row.model, Purpose.RERANK):
                ranked = await self._call(row, api_key, query, documents)
        except httpx.TimeoutException:
            raise _failed(FailureKind.TIMEOUT, row, f"no answer within {self.timeout:g}s", api_key) from None
        except httpx.HTTPError as exc:
            raise _failed(FailureKind.UNAVAILABLE, row, f"no answer: {type(exc).__name__}: {exc}", api_key) from None
        return sorted(ranked, key=lambda r: r.score, reverse=True)

    async def _endpoint(self, endpoint_id: str) -> tuple[ModelEndpoint, str]:
        async with self.sessions() as session:
            row = await session.get(ModelEndpoint, endpoint_id)
        if row is None:
            raise RerankError(f"rerank model {endpoint_id} is not registered (deleted?)")
        if row.purpose != RERANK_PURPOSE:
            raise RerankError(f"model {row.name!r} is a {row.purpose} model, not a rerank model")
        if self._box is None:
            self._box = SecretBox.from_settings(self.settings)
        try:
            return row, self._box.open(row.api_key_sealed)
        except CorruptData as exc:
            raise RerankError(str(exc)) from None

    async def _call(self, row: ModelEndpoint, api_key: str, query: str, documents: Sequence[str]) -> list[Ranked]:
        url = row.base_url.rstrip("/") + "/rerank"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        common = {"model": row.model, "query": query, "documents": list(documents), "top_n": len(documents)}
        tei = {"query": query, "texts": list(documents)}
        body = tei if row.base_url in self._tei else common
        reply = await self._http.post(url, json=body, headers=headers, timeout=self.timeout)
        if reply.status_code == 422 and body is common:
            reply = await self._http.post(url, json=tei, headers=headers, timeout=self.timeout)
            if reply.is_success:
                self._tei.add(row.base_url)
        if not reply.is_success:
            detail = f"answered HTTP {reply.status_code}: {reply.text[:200]}"
            raise _failed(status_kind(reply.status_code), row, detail, api_key)
        try:
            body_json = reply.json()
        except ValueError:
            raise _failed(FailureKind.UNUSABLE, row, "answered, but not with JSON", api_key) from None
        try:
            return parsed(body_json, len(documents))
        except ValueError as exc:
            raise _failed(FailureKind.UNUSABLE, row, f"answered, but {exc}", api_key) from None

    async def aclose(self) -> None:
        await self._http.aclose()


def parsed(reply: Any, count: int) -> list[Ranked]:
    """The scores in either shape; ValueError (in words) when the reply is neither, or names a
    document that was not sent."""
    items = reply.get("results") if isinstance(reply, dict) else reply
    if not isinstance(items, list):
        raise ValueError("not with a list of results")
    ranked: list[Ranked] = []
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score", item.get("score")) if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or not isinstance(score, int | float):
            raise ValueError("with a result that is not {index, relevance_score} for a document sent")
        ranked.append(Ranked(index, float(score)))
    return ranked


def _host(base_url: str) -> str:
    return urlsplit(base_url).netloc or base_url
