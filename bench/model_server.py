"""``python -m bench.model_server --port 0``: an OpenAI-protocol model endpoint with fixed
latencies, in its own process, for the pipeline benchmark.

Every auxiliary call (rewrite, assessment, summary) answers after ``--aux-latency``; the
assessment always says the evidence is sufficient (``{"sufficient": true, "missing": "",
"queries": []}``), so a question takes one retrieval round. An answer streams ``--chunks``
pieces, one every ``--chunk-delay``; embeddings answer after ``--embedding-latency`` with the
test suite's deterministic fake vectors. Waits are kept against deadlines measured from the
moment the request body has arrived, so timer slack does not add up over a stream.

A bare ASGI app on uvicorn (no framework in the way), since this process shares the machine's
cores with the stack under test. It prints ``PORT <n>`` on stdout once it listens.
``GET /stats`` returns the calls served per job, ``GET /timeline`` each call's arrival and end
(CLOCK_MONOTONIC, the clock of ``time.perf_counter`` in every process, so a driver can line
them up with its own timestamps); ``POST /stats/reset`` clears both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import uvicorn

from tests.fakes.openai_server import fake_embedding, request_kind
from tests.fakes.threaded_server import request_body

Json = dict[str, Any]
Scope = dict[str, Any]

ASSESSMENT = json.dumps({"sufficient": True, "missing": "", "queries": []}, ensure_ascii=False)
SUMMARY = "问：较早的问题｜答：较早的回答"
REWRITE_MARK = "最后的问题:"


@dataclass(frozen=True)
class Latencies:
    aux: float = 0.1
    chunks: int = 50
    chunk_delay: float = 0.01
    embedding: float = 0.05


@dataclass
class Stats:
    calls: Counter[str] = field(default_factory=Counter)
    embedded_texts: int = 0
    late_ms_max: float = 0.0  # worst lateness of a scheduled send behind its deadline
    # (job, arrived, answered, the input's last 120 characters): CLOCK_MONOTONIC seconds, the
    # clock of time.perf_counter() in every process, so a driver can line calls up with its asks.
    timeline: list[tuple[str, float, float, str]] = field(default_factory=list)

    def as_json(self) -> Json:
        return {"calls": dict(self.calls), "embedded_texts": self.embedded_texts, "late_ms_max": self.late_ms_max}


class ModelServer:
    def __init__(self, latencies: Latencies) -> None:
        self.latencies = latencies
        self.stats = Stats()
        self._ids = 0

    async def _until(self, deadline: float) -> None:
        wait = deadline - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        late = (time.perf_counter() - deadline) * 1000
        if late > self.stats.late_ms_max:
            self.stats.late_ms_max = late

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await request_body(receive)
        started = time.perf_counter()
        path, method = scope["path"], scope["method"]
        if path.endswith("/chat/completions") and method == "POST":
            await self._chat(json.loads(body), started, send)
        elif path.endswith("/embeddings") and method == "POST":
            await self._embeddings(json.loads(body), started, send)
        elif path == "/stats" and method == "GET":
            await _json(send, self.stats.as_json())
        elif path == "/timeline" and method == "GET":
            await _json(send, {"timeline": self.stats.timeline})
        elif path == "/stats/reset" and method == "POST":
            self.stats = Stats()
            await _json(send, {})
        else:
            await _json(send, {"error": {"message": f"no route {method} {path}"}}, status=404)

    def _next_id(self) -> str:
        self._ids += 1
        return f"chatcmpl-bench-{self._ids}"

    def _log(self, kind: str, started: float, text: str) -> None:
        self.stats.timeline.append((kind, started, time.perf_counter(), text[-120:]))

    async def _chat(self, body: Json, started: float, send: Any) -> None:
        kind = request_kind(body)
        self.stats.calls[kind] += 1
        model = body.get("model", "")
        user = str(body.get("messages", [{}])[-1].get("content", ""))
        if kind == "generate":
            if body.get("stream"):
                await self._stream(body, started, send)
                self._log(kind, started, user)
                return
            await self._until(started + self.latencies.chunks * self.latencies.chunk_delay)
            content = "".join(_pieces(self.latencies.chunks))
        else:
            await self._until(started + self.latencies.aux)
            content = ASSESSMENT if kind == "assess" else SUMMARY if kind == "summarize" else _rewrite(body)
        self._log(kind, started, user)
        await _json(
            send,
            {
                "id": self._next_id(),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": len(content), "total_tokens": 100 + len(content)},
            },
        )

    async def _stream(self, body: Json, started: float, send: Any) -> None:
        head = {"id": self._next_id(), "object": "chat.completion.chunk", "created": int(time.time())}
        head["model"] = body.get("model", "")

        def event(delta: Json, finish: str | None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return b"data: " + json.dumps({**head, "choices": [choice]}, ensure_ascii=False).encode() + b"\n\n"

        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")],
            }
        )
        await send(
            {"type": "http.response.body", "body": event({"role": "assistant", "content": ""}, None), "more_body": True}
        )
        pieces = _pieces(self.latencies.chunks)
        for index, piece in enumerate(pieces, 1):
            await self._until(started + index * self.latencies.chunk_delay)
            await send({"type": "http.response.body", "body": event({"content": piece}, None), "more_body": True})
        tail = event({}, "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            answer = sum(len(p) for p in pieces)
            usage = {"prompt_tokens": 100, "completion_tokens": answer, "total_tokens": 100 + answer}
            tail += b"data: " + json.dumps({**head, "choices": [], "usage": usage}).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": tail + b"data: [DONE]\n\n", "more_body": False})

    async def _embeddings(self, body: Json, started: float, send: Any) -> None:
        raw = body.get("input", "")
        texts = [raw] if isinstance(raw, str) else [str(item) for item in raw]
        self.stats.calls["embeddings"] += 1
        self.stats.embedded_texts += len(texts)
        dim = int(body.get("dimensions") or 384)
        data = [{"object": "embedding", "index": i, "embedding": fake_embedding(t, dim)} for i, t in enumerate(texts)]
        await self._until(started + self.latencies.embedding)
        self._log("embeddings", started, texts[0] if texts else "")
        tokens = sum(len(t) for t in texts)
        await _json(
            send,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def _pieces(count: int) -> list[str]:
    return [f"第{i}段：依据检索资料作答。" for i in range(1, count + 1)]


def _rewrite(body: Json) -> str:
    """A standalone question that differs from every asked one, so it never hits a query cache."""
    user = next((str(m.get("content", "")) for m in body.get("messages", []) if m.get("role") == "user"), "")
    question = user.rpartition(REWRITE_MARK)[2] or user
    return f"（独立检索）{question}"


async def _json(send: Any, payload: Json, status: int = 200) -> None:
    data = json.dumps(payload, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--aux-latency", type=float, default=Latencies.aux, help="seconds per auxiliary call")
    parser.add_argument("--chunks", type=int, default=Latencies.chunks, help="pieces per streamed answer")
    parser.add_argument("--chunk-delay", type=float, default=Latencies.chunk_delay, help="seconds before each piece")
    parser.add_argument(
        "--embedding-latency", type=float, default=Latencies.embedding, help="seconds per embeddings request"
    )
    args = parser.parse_args()
    app = ModelServer(Latencies(args.aux_latency, args.chunks, args.chunk_delay, args.embedding_latency))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((args.host, args.port))
    sock.listen(4096)  # before the port is announced: a client may connect at once
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", http="h11", ws="none", loop="asyncio", backlog=4096
    )
    server = uvicorn.Server(config)
    sys.stdout.write(f"PORT {sock.getsockname()[1]}\n")
    sys.stdout.flush()
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
