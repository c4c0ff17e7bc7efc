"""The remote model: any OpenAI-compatible endpoint, through the official ``openai`` client.

Auxiliary jobs (rewrite, assess, summarize) are short, non-streaming, temperature-0 calls on
the auxiliary model; answers stream from the chat model. Every failure becomes a ``ModelError``
whose kind tells the caller what to do: ``unavailable`` (retry later, answer without it),
``truncated`` (the output hit its token limit — never used as if complete) or ``bad_response``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import ResponseFormat

from kbcore.models.base import (
    ChatMessage,
    EvidenceParagraph,
    GenerationRequest,
    GenerationStream,
    HistoryTurn,
    ModelError,
    Usage,
)
from kbcore.models.prompts import (
    ASSESS_SYSTEM,
    REWRITE_SYSTEM,
    SUMMARIZE_SYSTEM,
    assess_user_content,
    rewrite_user_content,
    summarize_user_content,
)
from kbcore.models.usage import estimate_usage

log = logging.getLogger(__name__)

REWRITE_MAX_TOKENS = 512
ASSESS_MAX_TOKENS = 900
SUMMARIZE_MAX_TOKENS = 1024
_JSON_OBJECT: ResponseFormat = {"type": "json_object"}
# Servers without authentication still need some key; an explicit placeholder also keeps the
# client from picking up an unrelated OPENAI_API_KEY from the environment.
_NO_KEY = "not-needed"
_MESSAGE_LIMIT = 300


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
    """The server's own error message when it sent an OpenAI-style error body."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return exc.message


def model_error(job: str, exc: openai.OpenAIError, *, timeout: float) -> ModelError:
    """A readable ModelError for a failed call: which job, and what the endpoint did."""
    if isinstance(exc, openai.APITimeoutError):
        message = f"{job}: the model endpoint did not respond within {timeout:g}s"
    elif isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        message = f"{job}: cannot reach the model endpoint ({type(cause).__name__}: {cause})"
    elif isinstance(exc, openai.APIStatusError):
        message = f"{job}: the model endpoint answered HTTP {exc.status_code}: {_status_detail(exc)}"
    elif isinstance(exc, openai.APIResponseValidationError):
        return ModelError(f"{job}: malformed response from the model endpoint", kind="bad_response")
    else:
        message = f"{job}: model call failed: {exc}"
    return ModelError(message[:_MESSAGE_LIMIT], kind="unavailable")


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
        temperature: float = 0.3,
        max_retries: int = 2,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """``timeout`` bounds each HTTP operation (connect, and every read of a stream).

        ``disable_thinking`` sends ``thinking: {type: disabled}`` on the auxiliary calls, as the
        seed does, so reasoning models spend their output budget on the result; endpoints that
        reject unknown fields (api.openai.com) need it off. ``http_client`` is for tests.
        """
        self.model_name = chat_model
        self.aux_model = aux_model or chat_model
        self._timeout = timeout
        self._temperature = temperature
        self._aux_extra_body: dict[str, Any] | None = {"thinking": {"type": "disabled"}} if disable_thinking else None
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or _NO_KEY,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )

    async def _complete(self, job: str, system: str, user: str, *, max_tokens: int, json_mode: bool = False) -> str:
        """One non-streaming auxiliary call; only a complete, non-empty answer is returned."""
        try:
            completion = await self._client.chat.completions.create(
                model=self.aux_model,
                messages=[
                    ChatCompletionSystemMessageParam(role="system", content=system),
                    ChatCompletionUserMessageParam(role="user", content=user),
                ],
                temperature=0,
                max_tokens=max_tokens,
                response_format=_JSON_OBJECT if json_mode else openai.omit,
                extra_body=self._aux_extra_body,
            )
        except openai.OpenAIError as exc:
            raise model_error(job, exc, timeout=self._timeout) from exc
        if not completion.choices:
            raise ModelError(f"{job}: the model returned no choices", kind="bad_response")
        choice = completion.choices[0]
        if choice.finish_reason == "length":
            raise ModelError(f"{job}: the output hit the {max_tokens}-token limit", kind="truncated")
        content = (choice.message.content or "").strip()
        if not content:
            raise ModelError(f"{job}: the model returned an empty answer", kind="bad_response")
        return content

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        if not history:
            return question  # nothing to resolve against: spare the call, as the seed does
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
        return _unfence(content)

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

    async def _stream(self, request: GenerationRequest, usage: Usage) -> AsyncIterator[str]:
        try:
            stream = await self._client.chat.completions.create(
                model=self.model_name,
                messages=_message_params(request.messages),
                temperature=self._temperature,
                max_tokens=request.max_tokens if request.max_tokens is not None else openai.omit,
                stream=True,
                stream_options={"include_usage": True},
            )
        except openai.OpenAIError as exc:
            raise model_error("generate", exc, timeout=self._timeout) from exc
        received: list[str] = []
        reported: Usage | None = None
        finished = False
        try:
            async for chunk in stream:
                if chunk.usage is not None:
                    reported = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                for choice in chunk.choices[:1]:
                    if choice.delta.content:
                        received.append(choice.delta.content)
                        yield choice.delta.content
                    if choice.finish_reason is not None:
                        finished = True
                    if choice.finish_reason == "length":
                        log.info("answer reached its token limit after %d characters", sum(map(len, received)))
            if not finished:
                raise ModelError("generate: the answer stream ended before the model finished", kind="unavailable")
        except openai.OpenAIError as exc:
            raise model_error("generate", exc, timeout=self._timeout) from exc
        except ValueError as exc:  # a data line that is not JSON
            raise ModelError(f"generate: malformed stream chunk ({exc})", kind="bad_response") from exc
        finally:
            await stream.close()  # on early exit too: the server must see the request end
            final = reported or estimate_usage(request.messages, "".join(received))
            usage.prompt_tokens, usage.completion_tokens = final.prompt_tokens, final.completion_tokens

    async def aclose(self) -> None:
        await self._client.close()


def _unfence(text: str) -> str:
    """Some endpoints wrap JSON-mode output in a Markdown code fence; the caller wants the JSON."""
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner.removeprefix("json").strip()
    return text
