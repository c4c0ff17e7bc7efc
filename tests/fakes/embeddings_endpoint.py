"""An OpenAI-protocol embeddings endpoint with a stated capacity, so ingestion throughput can be
held against what the endpoint can serve.

Like a real server's worker pool, it serves at most ``slots`` requests at once (a request beyond
them waits for a free slot), each for a fixed ``latency`` once a slot is free, and takes at most
``max_batch`` inputs per request (more is refused with 400, as OpenAI refuses an oversized
batch). Its capacity is therefore ``slots × max_batch / latency`` inputs per second, and no
client can get more out of it.

``EmbeddingsEndpoint.answer`` is that behaviour as one call: the bench's model server
(``bench/model_server.py``, its own process) and ``FakeEmbeddings`` (a bare ASGI app on a thread,
for tests) both serve it. It records the batch sizes and the most requests it ever served at
once, and can be told to fail requests carrying a given text (a 500, or a 429 with a short
``retry-after-ms``) a number of times.

It must not compete for the CPU it is measured against (the bench runs it on the same cores as
the ingestion, and a real endpoint's CPU is elsewhere): a text's vector is one of ``POOL``
deterministic unit vectors (``vector_for``), each turned into JSON once. ``python -m tests.fakes.embeddings_endpoint --latency 0.25
--slots 4 --max-batch 64`` serves it in a process of its own (the bench), printing ``PORT <n>``.

    with FakeEmbeddings(Capacity(latency=0.05, slots=4, max_batch=64)) as fake:
        embedder = OpenAIEmbedder(base_url=fake.base_url, ...)
        ...
        assert fake.endpoint.max_concurrent <= 4
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import signal
import struct
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from tests.fakes.openai_server import fake_embedding
from tests.fakes.threaded_server import ThreadedServer, request_body

Json = dict[str, Any]
RETRY_AFTER_MS = 20  # what a 429 asks the client to wait: short, so tests stay quick
POOL = 4096  # distinct vectors: two texts of one small test share one with a negligible chance


@dataclass(frozen=True)
class Capacity:
    latency: float = 0.05  # seconds a request takes once a slot serves it
    slots: int = 4  # requests served at once
    max_batch: int = 64  # inputs per request

    @property
    def per_second(self) -> float:
        """The most inputs per second any client can have embedded."""
        return self.slots * self.max_batch / self.latency


@dataclass
class _Failure:
    marker: str
    status: int
    times: int  # requests still to fail


@dataclass
class Reply:
    status: int
    body: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


class EmbeddingsEndpoint:
    """The endpoint's behaviour; every ``answer`` runs on the serving event loop."""

    def __init__(self, capacity: Capacity, dimension: int = 384) -> None:
        self.capacity = capacity
        self.dimension = dimension
        self._slots: asyncio.Semaphore | None = None  # made on the serving loop, at the first request
        self._lock = threading.Lock()  # the recordings are read from the test's thread
        self._failures: list[_Failure] = []
        self.batch_sizes: list[int] = []  # inputs of every request served, refused ones included
        self.inputs: list[list[str]] = []
        self.concurrent = 0
        self.max_concurrent = 0  # most requests inside the endpoint at once (waiting or served)
        self.served_inputs = 0
        self._encoded: dict[tuple[int, int, bool], str] = {}  # (pool slot, dimension, base64) -> its JSON

    @staticmethod
    def _slot(text: str) -> int:
        return zlib.crc32(text.encode()) % POOL

    def vector_for(self, text: str, dimension: int | None = None) -> list[float]:
        """The unit vector this endpoint answers for ``text``: equal texts embed equally."""
        return fake_embedding(f"pool:{self._slot(text)}", dimension or self.dimension)

    def _encoded_vector(self, text: str, dimension: int, as_base64: bool) -> str:
        key = (self._slot(text), dimension, as_base64)
        encoded = self._encoded.get(key)
        if encoded is None:
            vector = self.vector_for(text, dimension)
            packed = base64.b64encode(struct.pack(f"<{dimension}f", *vector)).decode() if as_base64 else vector
            encoded = self._encoded[key] = json.dumps(packed)
        return encoded

    def fail_when(self, marker: str, status: int, times: int) -> None:
        """Answer ``status`` to the next ``times`` requests with an input containing ``marker``."""
        with self._lock:
            self._failures.append(_Failure(marker, status, times))

    def reset(self) -> None:
        with self._lock:
            self._failures.clear()
            self.batch_sizes.clear()
            self.inputs.clear()
            self.max_concurrent = self.served_inputs = 0

    def _failure_for(self, texts: list[str]) -> int:
        with self._lock:
            for failure in self._failures:
                if failure.times > 0 and any(failure.marker in text for text in texts):
                    failure.times -= 1
                    return failure.status
        return 0

    def _enter(self, texts: list[str]) -> None:
        with self._lock:
            self.batch_sizes.append(len(texts))
            self.inputs.append(texts)
            self.concurrent += 1
            self.max_concurrent = max(self.max_concurrent, self.concurrent)

    def _leave(self, served: int) -> None:
        with self._lock:
            self.concurrent -= 1
            self.served_inputs += served

    async def answer(self, body: Json) -> Reply:
        raw = body.get("input", "")
        texts = [raw] if isinstance(raw, str) else [str(item) for item in raw]
        if len(texts) > self.capacity.max_batch:
            self._enter(texts)
            self._leave(0)
            return _error(400, f"at most {self.capacity.max_batch} inputs per request, got {len(texts)}")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.capacity.slots)
        self._enter(texts)
        status = 0
        try:
            async with self._slots:
                ends = time.perf_counter() + self.capacity.latency
                status = self._failure_for(texts)
                data = b"" if status else self._body(texts, body)
                await asyncio.sleep(max(0.0, ends - time.perf_counter()))
        finally:
            self._leave(0 if status else len(texts))
        if status:
            reply = _error(status, "scripted failure")
            if status == 429:
                reply.headers.append((b"retry-after-ms", str(RETRY_AFTER_MS).encode()))
            return reply
        return Reply(200, data)

    def _body(self, texts: list[str], body: Json) -> bytes:
        """The response's JSON, put together from the vectors' cached JSON."""
        dimension = int(body.get("dimensions") or self.dimension)
        as_base64 = body.get("encoding_format") == "base64"
        rows = ",".join(
            f'{{"object":"embedding","index":{i},"embedding":{self._encoded_vector(text, dimension, as_base64)}}}'
            for i, text in enumerate(texts)
        )
        tokens = sum(len(t) for t in texts)
        tail = {"model": body.get("model", ""), "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
        return f'{{"object":"list","data":[{rows}],{json.dumps(tail)[1:]}'.encode()


def _error(status: int, message: str) -> Reply:
    kind = "invalid_request_error" if status < 500 else "server_error"
    error = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Reply(status, json.dumps(error).encode())


async def send_reply(send: Any, reply: Reply) -> None:
    """``reply`` as an ASGI JSON response."""
    data = reply.body
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers + reply.headers})
    await send({"type": "http.response.body", "body": data})


class FakeEmbeddings:
    """``EmbeddingsEndpoint`` served on 127.0.0.1 from a thread: ``POST /v1/embeddings`` only."""

    def __init__(self, capacity: Capacity, dimension: int = 384) -> None:
        self.endpoint = EmbeddingsEndpoint(capacity, dimension)
        self._served = ThreadedServer("fake-embeddings")
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __call__(self, scope: Json, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await request_body(receive)
        if scope["path"] != "/v1/embeddings" or scope["method"] != "POST":
            await send_reply(send, _error(404, f"no route {scope['method']} {scope['path']}"))
            return
        await send_reply(send, await self.endpoint.answer(json.loads(body)))

    def __enter__(self) -> FakeEmbeddings:
        self.port = self._served.start(self)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._served.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="An embeddings endpoint with a fixed capacity.")
    parser.add_argument("--latency", type=float, default=Capacity.latency, help="seconds per request")
    parser.add_argument("--slots", type=int, default=Capacity.slots, help="requests served at once")
    parser.add_argument("--max-batch", type=int, default=Capacity.max_batch, help="inputs per request")
    parser.add_argument("--dimension", type=int, default=384)
    args = parser.parse_args()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})  # for sigwait, in every thread
    with FakeEmbeddings(Capacity(args.latency, args.slots, args.max_batch), args.dimension) as fake:
        sys.stdout.write(f"PORT {fake.port}\n")
        sys.stdout.flush()
        signal.sigwait({signal.SIGTERM, signal.SIGINT})


if __name__ == "__main__":
    main()
