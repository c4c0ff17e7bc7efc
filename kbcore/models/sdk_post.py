"""A JSON POST to an OpenAI-compatible endpoint through the ``openai`` client's public ``post``
(the SDK's documented way to call a route with a body of one's own), answered as the raw
``httpx2.Response``: read unless ``stream``, left for the caller to read when it is.

The SDK's rules therefore decide everything about the exchange: its headers, which failures and
statuses are retried (connection errors, timeouts, 408, 409, 429, 5xx, ``x-should-retry``), how
long it waits (``Retry-After`` or backoff with jitter), and the exception each failure becomes
(``APITimeoutError``, ``APIConnectionError``, the ``APIStatusError`` subclass of the status).
Callers catch ``openai.OpenAIError``.

Bodies are our own dictionaries and answers are read as raw JSON or raw event streams rather
than through the typed ``create`` methods: those walk every parameter through their schema and
build a typed reply per call (and per streamed event), several times the CPU of the exchange.
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai


class SdkPost:
    """``post(path, body)`` on ``client``'s endpoint: the response, read unless ``stream``."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client

    async def post(self, path: str, body: dict[str, Any], *, stream: bool = False) -> httpx2.Response:
        response: httpx2.Response = await self._client.post(path, cast_to=httpx2.Response, body=body, stream=stream)
        return response
