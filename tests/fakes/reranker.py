"""A real HTTP rerank endpoint (``POST /v1/rerank``), scripted per test, recording its requests.

It speaks Cohere/Jina/vLLM's shape (``{model, query, documents, top_n}`` →
``{results: [{index, relevance_score}]}``) or, with ``tei=True``, Hugging Face TEI's
(``{query, texts}`` → ``[{index, score}]``, and 422 for a body without ``texts``, as TEI answers).
Scores come from ``rule(query, documents)``; the default scores later documents higher, so the
reranked order is the reverse of the order sent. ``status`` makes every call fail with it.

    with FakeReranker() as fake:
        ... register fake.base_url as a rerank model ...
        assert fake.requests[0]["query"] == "..."
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.threaded_server import ThreadedServer

Rule = Callable[[str, Sequence[str]], list[float]]


def reverse_order(query: str, documents: Sequence[str]) -> list[float]:
    """Later documents score higher: the rerank order is the reverse of the search order."""
    return [round((i + 1) / len(documents), 4) for i in range(len(documents))]


def keyword_first(keyword: str) -> Rule:
    """Documents containing ``keyword`` first (score 0.9), the rest after (0.1), search order within each."""

    def rule(query: str, documents: Sequence[str]) -> list[float]:
        return [0.9 - i * 0.001 if keyword in d else 0.1 - i * 0.001 for i, d in enumerate(documents)]

    return rule


class FakeReranker:
    def __init__(self, *, rule: Rule = reverse_order, tei: bool = False) -> None:
        self.rule = rule
        self.tei = tei
        self.status = 200  # anything else: every call answers this status
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._served = ThreadedServer("fake-reranker")
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The bodies received, in order (refused ones included)."""
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()
        self.status = 200

    async def _rerank(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self._requests.append({**body, "authorization": request.headers.get("authorization", "")})
        if self.status != 200:
            return JSONResponse({"error": "scripted failure"}, status_code=self.status)
        documents = body.get("texts") if self.tei else body.get("documents")
        if not isinstance(documents, list) or not isinstance(body.get("query"), str):
            return JSONResponse({"error": "Json deserialize error: missing field `texts`"}, status_code=422)
        scores = self.rule(body["query"], documents)
        order = sorted(range(len(documents)), key=lambda i: scores[i], reverse=True)
        if self.tei:
            return JSONResponse([{"index": i, "score": scores[i]} for i in order])
        top_n = int(body.get("top_n") or len(documents))
        results = [{"index": i, "relevance_score": scores[i]} for i in order[:top_n]]
        return JSONResponse({"id": "rerank-1", "model": body.get("model"), "results": results})

    def start(self) -> FakeReranker:
        self.port = self._served.start(Starlette(routes=[Route("/v1/rerank", self._rerank, methods=["POST"])]))
        return self

    def stop(self) -> None:
        self._served.stop()

    def __enter__(self) -> FakeReranker:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
