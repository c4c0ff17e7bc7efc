"""A real HTTP server speaking the OpenAI protocol, scripted per test.

The services under test use the real ``openai`` client against it, so request shapes,
streaming, error bodies, timeouts and disconnects go through the same code as in production.
Starlette app, served by uvicorn on 127.0.0.1 port 0 in a background thread; the bound port is
read back from the listening socket.

    with FakeOpenAI() as fake:
        fake.enqueue(ChatReply("改写后的问题"), ChatReply.stream(["答", "案"], chunk_delay=0.05))
        client = OpenAIModelClient(base_url=fake.base_url, api_key="k", chat_model="m")
        ...
        assert fake.chat_bodies[0]["temperature"] == 0
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import math
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from kbcore.models.openai_client import OpenAIModelClient
from kbcore.models.prompts import ASSESS_SYSTEM, REWRITE_SYSTEM, SUMMARIZE_SYSTEM
from tests.fakes.threaded_server import ThreadedServer

Json = dict[str, Any]


@dataclass
class ChatReply:
    """One scripted answer to a /v1/chat/completions request (streaming or not, as the request asks)."""

    content: str = "fake answer"
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None  # None: computed from the request and content
    include_usage: bool = True  # False: never send usage, even when stream_options asks for it
    chunks: list[str] | None = None  # streamed pieces; None: ``content`` in 4-character pieces
    chunk_delay: float = 0.0  # seconds before each streamed piece
    delay: float = 0.0  # seconds before the response starts
    status: int = 200  # an error status sends an OpenAI-style error body instead
    error_message: str = "scripted failure"
    hang_after: int | None = None  # streaming: after this many pieces, send nothing until the client leaves
    # Streaming: after ``held_after`` pieces, send nothing until the test sets ``release`` (a
    # model mid-answer for exactly as long as the test needs, instead of a guess in seconds).
    held_after: int | None = None
    release: threading.Event | None = None
    raw_events: list[str] | None = None  # streaming: these exact ``data:`` payloads instead of chunks
    cut_after: int | None = None  # streaming: after this many pieces, drop the connection mid-body
    raw_body: str | None = None  # this exact body (e.g. a proxy's HTML page) instead of an API answer
    content_type: str = "text/html; charset=utf-8"  # of ``raw_body``
    reasoning: list[str] | None = None  # thinking pieces; None: the server's ``default_reasoning``

    @classmethod
    def stream(cls, chunks: Sequence[str], *, chunk_delay: float = 0.0, **kwargs: Any) -> ChatReply:
        return cls(content="".join(chunks), chunks=list(chunks), chunk_delay=chunk_delay, **kwargs)

    @classmethod
    def error(cls, status: int, message: str = "scripted failure") -> ChatReply:
        return cls(status=status, error_message=message)

    @classmethod
    def hang(cls, chunks: Sequence[str] = ("部分",)) -> ChatReply:
        """Streams ``chunks``, then stalls mid-answer until the client disconnects."""
        return cls.stream(chunks, hang_after=len(chunks))

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        return [self.content[i : i + 4] for i in range(0, len(self.content), 4)]


Responder = Callable[[Json], ChatReply]


def system_prompt(body: Json) -> str:
    for message in body.get("messages", []):
        if message.get("role") == "system":
            return str(message.get("content", ""))
    return ""


def request_kind(body: Json) -> str:
    """Which model job a chat request is: "rewrite", "assess", "summarize" or "generate"."""
    system = system_prompt(body)
    for kind, prompt in (("rewrite", REWRITE_SYSTEM), ("assess", ASSESS_SYSTEM), ("summarize", SUMMARIZE_SYSTEM)):
        if system == prompt:
            return kind
    return "generate"


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Json


@dataclass
class _State:
    """Everything the server thread and the test thread share, behind one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    queue: deque[ChatReply] = field(default_factory=deque)
    requests: list[RecordedRequest] = field(default_factory=list)
    cancelled: int = 0
    refusals: int = 0  # requests answered 400 for a field the server does not accept
    completed: int = 0
    cancelled_event: threading.Event = field(default_factory=threading.Event)


class _ScriptedStream(Response):
    """An SSE response that notices the client leaving, even while it sends nothing (a stall)."""

    def __init__(self, events: list[tuple[bool, str]], reply: ChatReply, state: _State) -> None:
        # No Response.__init__: it would declare a Content-Length, and a stream has none.
        self.status_code = 200
        self.background = None
        self.raw_headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]
        self._events = events  # (is a content piece, data payload)
        self._reply = reply
        self._state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        left = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            left.set()

        watcher = asyncio.create_task(watch())
        completed = False
        try:
            if await _left_during(left, self._reply.delay):
                return
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
            sent_pieces = 0
            for is_piece, payload in self._events:
                if self._reply.cut_after is not None and sent_pieces >= self._reply.cut_after:
                    raise ConnectionAbortedError("scripted: the connection drops mid-answer")
                if self._reply.hang_after is not None and sent_pieces >= self._reply.hang_after:
                    await left.wait()  # a stalled model: nothing more until the client gives up
                    return
                if sent_pieces == self._reply.held_after and await _left_before(left, self._reply.release):
                    return
                if is_piece:
                    if await _left_during(left, self._reply.chunk_delay):
                        return
                    sent_pieces += 1
                if left.is_set():
                    return
                await send({"type": "http.response.body", "body": f"data: {payload}\n\n".encode(), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            completed = True
        finally:
            watcher.cancel()
            with self._state.lock:
                if completed:
                    self._state.completed += 1
                else:
                    self._state.cancelled += 1
                    self._state.cancelled_event.set()


async def _left_during(left: asyncio.Event, seconds: float) -> bool:
    """Wait ``seconds``; True as soon as the client has gone."""
    if seconds <= 0:
        return left.is_set()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(left.wait(), seconds)
    return left.is_set()


async def _left_before(left: asyncio.Event, release: threading.Event | None) -> bool:
    """Wait until ``release`` is set (it is set from the test's thread); True if the client went first."""
    while release is not None and not release.is_set():
        if await _left_during(left, 0.01):
            return True
    return left.is_set()


class FakeOpenAI:
    """The scripted server. Use as a context manager (or ``start()``/``stop()`` in a fixture).

    Provider-like subclasses (``tests/fakes/providers.py``) override ``refusal`` (a request the
    provider answers with an error), ``thinks`` (whether the request leaves thinking on) and
    the field their thinking is streamed in."""

    reasoning_field = "reasoning_content"
    default_reasoning: tuple[str, ...] = ()  # thinking sent when a reply scripts none

    def refusal(self, body: Json) -> Response | None:
        """The error this provider answers ``body`` with, before any reply is used; None: none."""
        return None

    def thinks(self, body: Json) -> bool:
        """Whether this request leaves the model's thinking on."""
        return True

    def _reasoning(self, body: Json, reply: ChatReply) -> list[str]:
        pieces = reply.reasoning if reply.reasoning is not None else list(self.default_reasoning)
        return pieces if self.thinks(body) else []

    def __init__(
        self,
        *,
        default: ChatReply | Responder | None = None,
        embedding_dim: int = 16,
        embedding_delay: float = 0.0,
        models: Sequence[str] = ("fake-chat", "fake-aux", "fake-embedding"),
    ) -> None:
        self._initial_default: ChatReply | Responder = default or ChatReply()
        self.default = self._initial_default
        self.embedding_dim = embedding_dim
        self.embedding_delay = embedding_delay  # seconds per embeddings request: a remote endpoint's latency
        self.models = list(models)
        self._state = _State()
        self._ids = itertools.count(1)
        self._served = ThreadedServer("fake-openai")
        self.port = 0

    # --- scripting and inspection (test thread) ----------------------------------------

    def enqueue(self, *replies: ChatReply) -> None:
        """Replies for the next chat requests, in order; the default answers once they are used up."""
        with self._state.lock:
            self._state.queue.extend(replies)

    def reset(self) -> None:
        """Forget scripts, recordings and counters, so one server can serve a whole module of tests."""
        with self._state.lock:
            self._state.queue.clear()
            self._state.requests.clear()
            self._state.cancelled = self._state.completed = self._state.refusals = 0
            self._state.cancelled_event.clear()
        self.default = self._initial_default

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def chat_bodies(self) -> list[Json]:
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def refusals(self) -> int:
        """Requests refused by ``refusal`` (a provider's 400 for a field it does not accept)."""
        with self._state.lock:
            return self._state.refusals

    @property
    def cancelled_streams(self) -> int:
        """Streaming responses the client left before they were complete."""
        with self._state.lock:
            return self._state.cancelled

    @property
    def completed_streams(self) -> int:
        with self._state.lock:
            return self._state.completed

    def wait_for_cancelled_stream(self, timeout: float) -> bool:
        """True once some streaming response has seen its client leave, within ``timeout`` seconds."""
        return self._state.cancelled_event.wait(timeout)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        self.port = self._served.start(self._app())
        return self

    def stop(self) -> None:
        self._served.stop()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- the app (server thread) ---------------------------------------------------------

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    async def _record(self, request: Request) -> Json:
        body = await request.json()
        with self._state.lock:
            self._state.requests.append(RecordedRequest(request.url.path, dict(request.headers), body))
        return body  # type: ignore[no-any-return]

    def _next_reply(self, body: Json) -> ChatReply:
        with self._state.lock:
            if self._state.queue:
                return self._state.queue.popleft()
        return self.default if isinstance(self.default, ChatReply) else self.default(body)

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        refused = self.refusal(body)
        if refused is not None:
            with self._state.lock:
                self._state.refusals += 1
            return refused
        reply = self._next_reply(body)
        if reply.raw_body is not None:
            return Response(reply.raw_body, status_code=reply.status, media_type=reply.content_type)
        if reply.status >= 400:
            await asyncio.sleep(reply.delay)
            return _error(reply.status, reply.error_message)
        if body.get("stream"):
            return _ScriptedStream(self._stream_events(body, reply), reply, self._state)
        await asyncio.sleep(reply.delay)
        message: Json = {"role": "assistant", "content": reply.content}
        if thinking := self._reasoning(body, reply):
            message[self.reasoning_field] = "".join(thinking)
        return JSONResponse(
            {
                "id": f"chatcmpl-fake-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": reply.finish_reason,
                        "logprobs": None,
                    }
                ],
                "usage": _usage(body, reply),
            }
        )

    def _stream_events(self, body: Json, reply: ChatReply) -> list[tuple[bool, str]]:
        if reply.raw_events is not None:
            return [(False, payload) for payload in reply.raw_events]
        base = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", ""),
        }

        def chunk(delta: Json, finish: str | None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return json.dumps({**base, "choices": [choice]}, ensure_ascii=False)

        events = [(False, chunk({"role": "assistant", "content": ""}, None))]
        events += [
            (False, chunk({self.reasoning_field: piece, "content": None}, None))
            for piece in self._reasoning(body, reply)
        ]
        events += [(True, chunk({"content": piece}, None)) for piece in reply.pieces()]
        events.append((False, chunk({}, reply.finish_reason)))
        wants_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if wants_usage and reply.include_usage:
            events.append((False, json.dumps({**base, "choices": [], "usage": _usage(body, reply)})))
        events.append((False, "[DONE]"))
        return events

    async def _embeddings(self, request: Request) -> Response:
        body = await self._record(request)
        await asyncio.sleep(self.embedding_delay)
        raw = body.get("input", "")
        texts = [raw] if isinstance(raw, str) else [str(item) for item in raw]
        dim = int(body.get("dimensions") or self.embedding_dim)
        as_base64 = body.get("encoding_format") == "base64"  # the openai client asks for base64 by default
        data = []
        for index, text in enumerate(texts):
            vector = fake_embedding(text, dim)
            encoded: Any = base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode() if as_base64 else vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(t) for t in texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _models(self, request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models],
            }
        )


def fake_embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text``: equal texts embed equally, different ones differ."""
    values: list[float] = []
    for block in itertools.count():
        digest = hashlib.sha256(f"{block}:{text}".encode()).digest()
        values.extend((b - 127.5) / 127.5 for b in digest)
        if len(values) >= dim:
            break
    values = values[:dim]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def _usage(body: Json, reply: ChatReply) -> dict[str, int]:
    if reply.usage is not None:
        return reply.usage
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    completion = len(reply.content)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _error(status: int, message: str) -> Response:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": None}}, status_code=status)


def plausible_route(answer: Callable[[], ChatReply]) -> Responder:
    """Every model job answered plausibly: evidence sufficient, a rewrite, a summary, and
    ``answer()`` for generation."""

    def route(body: Json) -> ChatReply:
        kind = request_kind(body)
        if kind == "assess":
            return ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []}, ensure_ascii=False))
        if kind == "rewrite":
            return ChatReply(content="云岭县人民医院ICU探视时间如果遇到节假日怎么安排？")
        if kind == "summarize":
            return ChatReply(content="问：较早的问题｜答：较早的回答")
        return answer()

    return route


def client_for(server: FakeOpenAI, **options: Any) -> OpenAIModelClient:
    """The real OpenAI-compatible model client, pointed at ``server``, never retrying."""
    return OpenAIModelClient(
        base_url=server.base_url, api_key="test-key", chat_model="fake-chat", max_retries=0, **options
    )
