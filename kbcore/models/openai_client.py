"""The remote model: any OpenAI-compatible endpoint, through the official ``openai`` client.

Auxiliary jobs (rewrite, assess, summarize) are short, non-streaming, temperature-0 calls on
the auxiliary model; answers stream from the chat model. Every failure becomes a ``ModelError``
of a kind (``kbcore.models.failures``): ``unavailable`` and ``timeout`` (retry later, answer
without it), ``refused`` (an error status the endpoint will repeat) or ``unusable`` (an output
that hit its token limit, which is never used as if complete, or that is not an answer). Its
message is the kind's sentence; what the endpoint said goes to the log, without the key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import ssl
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import ResponseFormat

from kbcore.metrics.catalog import ModelCall, Purpose, stream_outcome
from kbcore.models.base import (
    ChatMessage,
    EvidenceParagraph,
    GenerationRequest,
    GenerationStream,
    HistoryTurn,
    ModelError,
    ReasoningDelta,
    Usage,
)
from kbcore.models.failures import FailureKind, status_kind
from kbcore.models.field_retry import RefusedFields
from kbcore.models.http_transport import model_http_client
from kbcore.models.model_post import ModelPost
from kbcore.models.prompts import (
    ASSESS_SYSTEM,
    REWRITE_SYSTEM,
    SUMMARIZE_SYSTEM,
    assess_user_content,
    rewrite_user_content,
    summarize_user_content,
)
from kbcore.models.providers import provider_profile
from kbcore.models.usage_estimate import estimate_usage
from kbcore.sse_decoder import SseParser
from kbcore.telemetry.tracing import model_span

log = logging.getLogger(__name__)

REWRITE_MAX_TOKENS = 512
ASSESS_MAX_TOKENS = 900
SUMMARIZE_MAX_TOKENS = 1024
_JSON_OBJECT: ResponseFormat = {"type": "json_object"}
# Servers without authentication still need some key; an explicit placeholder also keeps the
# client from picking up an unrelated OPENAI_API_KEY from the environment.
_NO_KEY = "not-needed"
_DRAIN_SECONDS = 0.1


def _message_params(messages: Sequence[ChatMessage]) -> list[ChatCompletionMessageParam]:
    params: list[ChatCompletionMessageParam] = []
    for m in messages:
        if m.role == "system":
            params.append(ChatCompletionSystemMessageParam(role="system", content=m.content))
        elif m.role == "assistant":
            params.append(ChatCompletionAssistantMessageParam(role="assistant", content=m.content))
        else:
            params.append(ChatCompletionUserMessageParam(role="user", content=m.content))
    return params


def _status_detail(exc: openai.APIStatusError) -> str:
    """The server's own error message when it sent an OpenAI-style error body; a web page
    (a proxy's or a wrong base URL's) is described, not quoted."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str) and _looks_like_html(body, exc.response.headers.get("content-type", "")):
        return "an HTML page instead of an API error (is the base URL right? it usually ends in /v1)"
    return exc.message


def _looks_like_html(text: str | bytes, content_type: str) -> bool:
    head = text[:64].decode("utf-8", "replace") if isinstance(text, bytes) else text[:64]
    return "html" in content_type.lower() or head.lstrip().startswith("<")


def model_error(job: str, exc: openai.OpenAIError, *, timeout: float, secret: str | None = None) -> ModelError:
    """The ModelError of a failed call: its kind, and for the log which job and what the
    endpoint did. Raise it ``from None``: the SDK's error carries the endpoint's unscrubbed
    body, and a traceback logged later would print it."""
    if isinstance(exc, openai.APITimeoutError):
        detail, kind = f"{job}: the model endpoint did not respond within {timeout:g}s", FailureKind.TIMEOUT
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        detail = f"{job}: cannot reach the model endpoint ({type(cause).__name__}: {cause})"
        kind = FailureKind.UNAVAILABLE
    elif isinstance(exc, openai.APIStatusError):
        detail = f"{job}: the model endpoint answered HTTP {exc.status_code}: {_status_detail(exc)}"
        kind = status_kind(exc.status_code)
    elif isinstance(exc, openai.APIResponseValidationError):
        detail, kind = f"{job}: malformed response from the model endpoint", FailureKind.UNUSABLE
    else:  # an error event inside the answer's stream: the endpoint failed mid-answer
        detail, kind = f"{job}: model call failed: {exc}", FailureKind.UNAVAILABLE
    return ModelError(detail, kind, secret=secret)


def _endpoint_label(base_url: str) -> str:
    """The base URL as logs may show it: no user info, query or fragment."""
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


class OpenAIModelClient:
    """ModelClient for an OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, vLLM, Ollama …)."""

    is_offline = False

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        chat_model: str,
        aux_model: str | None = None,
        timeout: float = 60.0,
        disable_thinking: bool = False,
        provider: str = "",
        temperature: float = 0.3,
        max_retries: int = 2,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """``timeout`` bounds each HTTP operation (connect, and every read of a stream).

        ``disable_thinking`` asks the auxiliary calls not to reason, in the way of the
        ``provider`` (a ``providers.PROFILES`` name; empty = detected from ``base_url``), so
        reasoning models spend their output budget on the result. A field the endpoint
        refuses is dropped and remembered (``field_retry``). ``http_client`` is for tests.
        """
        self.model_name = chat_model
        self.aux_model = aux_model or chat_model
        self.profile = provider_profile(provider, base_url)
        self._timeout = timeout
        self._temperature = temperature
        self._secret = api_key or None
        self._aux_extra_body: dict[str, Any] = dict(self.profile.no_thinking) if disable_thinking else {}
        self._refused = RefusedFields(_endpoint_label(base_url))
        http = http_client or model_http_client()
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or _NO_KEY,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http,
        )
        self._post_json = ModelPost(self._client, http).post

    @property
    def refused_fields(self) -> frozenset[str]:
        """Optional fields this endpoint refused, which are no longer sent."""
        return self._refused.refused

    def _error(self, job: str, exc: openai.OpenAIError) -> ModelError:
        return model_error(job, exc, timeout=self._timeout, secret=self._secret)

    async def _post(self, body: dict[str, Any], optional: set[str], *, stream: bool = False) -> httpx2.Response:
        """POST a chat completion; if the endpoint refuses one of the ``optional`` fields we
        sent, send it once more without them (and never again to this endpoint)."""
        sent = self._refused.strip(body)
        try:
            return await self._post_json("/chat/completions", sent, stream=stream)
        except openai.APIStatusError as exc:
            refused = self._refused.learn(exc, optional & sent.keys())
            if not refused:
                raise
        retry = {key: value for key, value in sent.items() if key not in refused}
        return await self._post_json("/chat/completions", retry, stream=stream)

    async def _complete(self, job: str, system: str, user: str, *, max_tokens: int, json_mode: bool = False) -> str:
        """One non-streaming auxiliary call; only a complete, non-empty answer is returned.

        Sent and read as plain JSON with the client's request, retry and error rules
        (``model_post.ModelPost``, as the client's raw ``post`` does): the typed ``create`` walks every
        parameter through its schema and builds a typed reply, which cost more than the rest
        of the call, for two fields of one choice. Reasoning a model sent along is ignored."""
        body: dict[str, Any] = {
            "model": self.aux_model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        if json_mode and self.profile.json_mode:
            body["response_format"] = _JSON_OBJECT
        body.update(self._aux_extra_body)
        optional = {"response_format", *self._aux_extra_body}
        with ModelCall(self.aux_model, Purpose.AUXILIARY) as call:
            try:
                with model_span(job, self.aux_model):
                    response = await self._post(body, optional)
            except openai.OpenAIError as exc:
                raise self._error(job, exc) from None
            answer = _json_body(job, response)
            if reported := _usage(answer.get("usage") if isinstance(answer, dict) else None):
                call.tokens(reported.prompt_tokens, reported.completion_tokens)
            return _answer_content(job, answer, max_tokens)

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        if not history:
            return question  # nothing to resolve against: spare the call
        return await self._complete(
            "rewrite", REWRITE_SYSTEM, rewrite_user_content(history, question), max_tokens=REWRITE_MAX_TOKENS
        )

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        content = await self._complete(
            "assess",
            ASSESS_SYSTEM,
            assess_user_content(question, history, evidence, searched),
            max_tokens=ASSESS_MAX_TOKENS,
            json_mode=True,
        )
        return _checked_assessment(_unfence(content))

    async def summarize(self, previous_summary: str, turns: Sequence[HistoryTurn]) -> str:
        return await self._complete(
            "summarize",
            SUMMARIZE_SYSTEM,
            summarize_user_content(previous_summary, turns),
            max_tokens=SUMMARIZE_MAX_TOKENS,
        )

    def generate(self, request: GenerationRequest) -> GenerationStream:
        """The answer's deltas; nothing is sent until the first delta is awaited.

        Consume it with ``contextlib.aclosing(stream.deltas)``: closing the iterator (or cancelling
        the task awaiting it) closes the HTTP response, and the server sees the request cancelled.
        """
        usage = Usage()
        return GenerationStream(deltas=self._stream(request, usage), usage=usage)

    async def _stream(self, request: GenerationRequest, usage: Usage) -> AsyncIterator[str | ReasoningDelta]:
        """The answer's deltas (thinking as ``ReasoningDelta``), read from the raw event stream.

        The request goes out like ``_complete``'s (``ModelPost``), and the body is
        left to us: the client's own stream builds a typed chunk object per event, which cost
        more than everything else done with that event. Events are decoded as the client
        decodes them; an error payload, a cut connection or a stall ends the answer with a
        ModelError, as it did through the client's stream."""
        received = _Received()
        call = ModelCall(self.model_name, Purpose.CHAT)  # observed once, when the stream ends
        try:
            with model_span("generate", self.model_name):  # until the stream opens: no span work per chunk
                http = await self._post(self._answer_body(request), {"stream_options"}, stream=True)
            # Closed on early exit too: the server must see the request end.
            async with contextlib.aclosing(http), contextlib.aclosing(_sse_data(_body_pieces(http))) as events:
                _require_event_stream(http)
                try:
                    async for data in events:
                        if data.startswith("[DONE]"):
                            await _drain(events)
                            break
                        for choice in received.choices(data, http.request):
                            for delta in received.deltas_of(choice):
                                yield delta
                            received.finish(choice)
                except httpx2.TimeoutException as exc:
                    raise openai.APITimeoutError(request=http.request) from exc
                except (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream) as exc:
                    raise ModelError(
                        f"generate: the connection was cut mid-answer ({type(exc).__name__})", FailureKind.UNAVAILABLE
                    ) from exc
            if not received.finished:
                raise ModelError("generate: the answer stream ended before the model finished", FailureKind.UNAVAILABLE)
        except openai.OpenAIError as exc:
            raise self._error("generate", exc) from None
        except (ValueError, AttributeError) as exc:  # a data line that is not JSON, or not shaped like a chunk
            raise ModelError(f"generate: malformed stream chunk ({exc})") from exc
        finally:
            final = received.usage or estimate_usage(request.messages, received.text())
            usage.prompt_tokens, usage.completion_tokens = final.prompt_tokens, final.completion_tokens
            call.tokens(final.prompt_tokens, final.completion_tokens)
            call.end(stream_outcome(received.finished))

    def _answer_body(self, request: GenerationRequest) -> dict[str, Any]:
        """The streamed chat completion of an answer, asking for the usage in the last event
        where the provider supports it."""
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": _message_params(request.messages),
            "temperature": self._temperature,
            "stream": True,
        }
        if self.profile.stream_usage:
            body["stream_options"] = {"include_usage": True}
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body

    async def aclose(self) -> None:
        await self._client.close()


def _json_body(job: str, response: httpx2.Response) -> Any:
    """The decoded answer of an auxiliary call; a web page or other non-JSON is named as such."""
    if _looks_like_html(response.content, response.headers.get("content-type", "")):
        raise ModelError(
            f"{job}: the model endpoint answered with an HTML page, not JSON "
            "(is the base URL right? it usually ends in /v1)"
        )
    try:
        return json.loads(response.content)
    except ValueError as exc:
        raise ModelError(f"{job}: the model endpoint answered with something that is not JSON") from exc


def _answer_content(job: str, body: Any, max_tokens: int) -> str:
    """The text of a complete auxiliary answer; a cut, empty or thinking-only one is an error."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices or not isinstance(choices, list):
        raise ModelError(f"{job}: the model returned no choices")
    choice = choices[0] if isinstance(choices[0], dict) else {}
    if choice.get("finish_reason") == "length":
        raise ModelError(f"{job}: the output hit the {max_tokens}-token limit")
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    content = content.strip() if isinstance(content, str) else ""
    if not content and _reasoning_of(message):
        raise ModelError(f"{job}: the model returned only its reasoning, no answer (is thinking disabled?)")
    if not content:
        raise ModelError(f"{job}: the model returned an empty answer")
    return content


def _checked_assessment(text: str) -> str:
    """The assessment when it is shaped like one (a JSON object with a boolean ``sufficient``),
    so a model that ignored the format is reported as the model's failure, by name."""
    try:
        decision = json.loads(text)
    except ValueError as exc:
        raise ModelError(f"assess: the model's assessment is not JSON ({text[:60]!r})") from exc
    if not isinstance(decision, dict):
        raise ModelError(f"assess: the model's assessment is a JSON {type(decision).__name__}, not an object")
    if not isinstance(decision.get("sufficient"), bool):
        kind = type(decision.get("sufficient")).__name__
        raise ModelError(f"assess: the model's assessment has 'sufficient' of type {kind}, not true/false")
    return text


def _require_event_stream(http: httpx2.Response) -> None:
    if "html" in http.headers.get("content-type", "").lower():
        raise ModelError(
            "generate: the model endpoint answered with an HTML page, not an event stream "
            "(is the base URL right? it usually ends in /v1)"
        )


def _reasoning_of(delta: Any) -> str:
    """A delta's (or message's) thinking: DeepSeek and DashScope say ``reasoning_content``,
    newer vLLM, Ollama and OpenRouter ``reasoning``."""
    for key in ("reasoning_content", "reasoning"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass
class _Received:
    """What an answer stream delivered so far: the usage is reported from it however it ends."""

    deltas: list[str] = field(default_factory=list)  # answer and thinking, for the usage estimate
    usage: Usage | None = None  # as the server reported it, if it did
    finished: bool = False  # the model gave a finish reason: the answer is complete

    def choices(self, data: str, request: httpx2.Request) -> Any:
        """The chunk's first choice, if any (only one is asked for), after noting its usage.

        An error payload raises it as the ``openai`` client would."""
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):
            raise _stream_error(chunk["error"], request)
        self.usage = _usage(chunk.get("usage")) or self.usage
        return (chunk.get("choices") or [])[:1]

    def deltas_of(self, choice: Any) -> list[str | ReasoningDelta]:
        """What a choice adds: its thinking first (it comes before the answer), then answer text."""
        delta = choice.get("delta") or {}
        found: list[str | ReasoningDelta] = []
        reasoning = _reasoning_of(delta)
        if reasoning:
            self.deltas.append(reasoning)
            found.append(ReasoningDelta(reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self.deltas.append(content)
            found.append(content)
        return found

    def text(self) -> str:
        return "".join(self.deltas)

    def finish(self, choice: Any) -> None:
        """Note a finish reason: a stream that ends without one was cut off."""
        reason = choice.get("finish_reason")
        if reason is not None:
            self.finished = True
        if reason == "length":
            log.info("answer reached its token limit after %d characters", sum(map(len, self.deltas)))


def _stream_error(error: Any, request: httpx2.Request) -> openai.APIError:
    """The error a server sent inside the stream, as the ``openai`` client's stream raises it."""
    message = error.get("message") if isinstance(error, dict) else None
    if not message or not isinstance(message, str):
        message = "An error occurred during streaming"
    return openai.APIError(message, request, body=error)


async def _drain(events: AsyncIterator[str]) -> None:
    """Read the rest of the body after ``[DONE]`` (normally nothing) for a moment, so HTTP/1.1
    can reuse the connection."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_DRAIN_SECONDS):
            async for _ in events:
                pass


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0))


def _body_pieces(http: httpx2.Response) -> AsyncIterator[bytes]:
    """The answer's body as it arrives. Through httpx2's ``aiter_bytes`` only when the endpoint
    compressed it: its decoder and chunker layers cost about 2 µs per piece, and an answer is
    read piece by piece (one per model delta)."""
    if "content-encoding" in http.headers or not isinstance(http.stream, httpx2.AsyncByteStream):
        return http.aiter_bytes()
    return aiter(http.stream)


async def _sse_data(chunks: AsyncIterator[bytes]) -> AsyncGenerator[str, None]:
    """The data of each server-sent event, as the ``openai`` client decodes it: a bad UTF-8
    byte is a malformed stream, and an event the server never closed is never dispatched."""
    parser = SseParser(errors="strict")
    async for chunk in chunks:
        for frame in parser.feed(chunk):
            yield frame.data


def _unfence(text: str) -> str:
    """Some endpoints wrap JSON-mode output in a Markdown code fence; the caller wants the JSON."""
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner.removeprefix("json").strip()
    return text
