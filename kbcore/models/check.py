"""One small real call to a model endpoint, reported in words (MaxKB validates a model on save).

A 1-token chat completion for chat and auxiliary models, one embedding for an embedding model,
one two-document ``/rerank`` for a reranker. The words never contain the API key: a refused key
is reported without the provider's message (OpenAI's echoes part of the key), and any other
message has the key scrubbed out before it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import openai

from kbcore.models.http_transport import model_http_client
from kbcore.models.scrub import shown

CHECK_TIMEOUT = 15.0


class _NotAnAnswer(Exception):
    """A 200 whose body is not what the call asks for."""


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    message: str


async def check_endpoint(*, base_url: str, api_key: str, model: str, purpose: str) -> CheckResult:
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "not-needed",
        timeout=CHECK_TIMEOUT,
        max_retries=0,
        http_client=model_http_client(),
    )
    try:
        await _probe(client, model, purpose)
    except openai.OpenAIError as exc:
        return CheckResult(False, shown(_failure(exc, base_url), api_key))
    except _NotAnAnswer as exc:
        return CheckResult(False, f"{_host(base_url)} {exc}")
    finally:
        await client.close()
    return CheckResult(True, f"the endpoint answered: model {model} works")


async def _probe(client: openai.AsyncOpenAI, model: str, purpose: str) -> None:
    if purpose == "embedding":
        reply = await client.embeddings.create(model=model, input="ping", encoding_format="float")
        if not reply.data or not reply.data[0].embedding:
            raise _NotAnAnswer("answered without an embedding")
    elif purpose == "rerank":
        body = {"model": model, "query": "ping", "documents": ["ping", "pong"]}
        await client.post("/rerank", body=body, cast_to=object)
    else:
        messages: list[openai.types.chat.ChatCompletionMessageParam] = [{"role": "user", "content": "ping"}]
        completion = await client.chat.completions.create(model=model, messages=messages, max_tokens=1)
        if not isinstance(completion, openai.types.chat.ChatCompletion) or not completion.choices:
            raise _NotAnAnswer("answered, but not with a chat completion")


def _host(base_url: str) -> str:
    return urlsplit(base_url).netloc or base_url


def _failure(exc: openai.OpenAIError, base_url: str) -> str:
    host = _host(base_url)
    if isinstance(exc, openai.APITimeoutError):
        return f"no answer from {host} within {CHECK_TIMEOUT:g}s"
    if isinstance(exc, openai.APIConnectionError):
        return f"no answer from {host}"
    if isinstance(exc, openai.AuthenticationError):
        return f"the API key was refused ({host} answered HTTP 401)"
    if isinstance(exc, openai.PermissionDeniedError):
        return f"the API key may not use this model ({host} answered HTTP 403)"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        detail = body.get("message") if isinstance(body, dict) else None
        return f"{host} answered HTTP {exc.status_code}: {detail if isinstance(detail, str) else exc.message}"
    if isinstance(exc, openai.APIResponseValidationError):
        return f"{host} answered, but not in the OpenAI format (is the base URL the API's, ending in /v1?)"
    return f"the call to {host} failed: {exc}"
