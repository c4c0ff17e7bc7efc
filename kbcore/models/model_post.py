"""A JSON POST to an OpenAI-compatible endpoint: the one exchange behind every model and
embeddings call (rewrite, assess, the answer stream, a query's embedding).

The ``openai`` client is kept for what a request is made of (base URL, key and default headers,
timeout, retry count, all public attributes), and for its exception classes, which callers
catch (``openai.OpenAIError``); the exchange itself is ours. The SDK's public ``post`` would do
it, but it builds each request through pydantic option models, deep copies per attempt and
header merging, several times the CPU of the exchange itself, and a question makes several
(bench/HISTORY.md has the side-by-side figures; docs/decisions/model-client.md the choice).

The rules are the ones the SDK documents, so callers see the same behaviour: connection errors,
timeouts, 408, 409, 429 and 5xx are retried ``max_retries`` times unless ``x-should-retry`` says
otherwise; the wait is the endpoint's ``Retry-After`` (up to two minutes; longer is not retried)
or backoff with jitter; each failure becomes the SDK's ``APITimeoutError``,
``APIConnectionError`` or the ``APIStatusError`` subclass of its status, worded as the SDK words it.

The request goes straight to the transport of our model HTTP client (aiohttp, wrapped by tracing
when it is on): httpx2's ``send`` around it (auth and redirect flows, a cookie jar, a wrapper per
response body) costs more again. A redirect, which no model endpoint we know sends, is followed
through that public ``send`` from its second hop on; an injected client (tests) always goes
through it.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import math
import random
import ssl
import time
from collections.abc import Mapping
from typing import Any

import anyio
import httpx2
import openai

from kbcore.models.http_transport import ModelHttpClient

log = logging.getLogger(__name__)

# What counts as a failed exchange, besides timeouts, as the SDK counts it.
_REQUEST_ERRORS = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)
RETRIED_STATUSES = frozenset({408, 409, 429})
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 120.0
_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


def retry_after(headers: httpx2.Headers) -> float | None:
    """The wait the endpoint asks for, in seconds: ``retry-after-ms``, ``retry-after`` as
    seconds or as an HTTP date; None when it names none."""
    for header, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(header)
        if value is None:
            continue
        try:
            return float(value) / divisor
        except ValueError:
            continue
    try:
        date = email.utils.parsedate_tz(headers.get("retry-after"))
        return None if date is None else float(email.utils.mktime_tz(date) - time.time())
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def should_retry(response: httpx2.Response) -> bool:
    """Whether a refused request is worth another attempt."""
    asked = retry_after(response.headers)
    if asked is not None and (math.isnan(asked) or asked > MAX_RETRY_AFTER):
        return False
    said = response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return response.status_code in RETRIED_STATUSES or response.status_code >= 500


def retry_delay(retries_done: int, headers: httpx2.Headers | None) -> float:
    """How long to wait before the next attempt."""
    asked = None if headers is None else retry_after(headers)
    if asked is not None and math.isfinite(asked) and 0 < asked <= MAX_RETRY_AFTER:
        return asked
    backoff = min(INITIAL_RETRY_DELAY * 2.0 ** min(retries_done, 1000), MAX_RETRY_DELAY)
    return max(backoff * (1 - 0.25 * random.random()), 0.0)


def status_error(response: httpx2.Response) -> openai.APIStatusError:
    """The SDK's exception for a refused request (its body already read), worded as the SDK does:
    ``Error code: N - <the error's message>``, the parsed body (its ``error`` object) attached."""
    message = f"Error code: {response.status_code}"
    text = response.text.strip()
    body: object = text
    with contextlib.suppress(ValueError):  # a body that is not JSON is kept as its text
        body = json.loads(text)
    data = body.get("error", body) if isinstance(body, Mapping) else body
    said = data.get("message") if isinstance(data, Mapping) else None
    if isinstance(said, str) and said:
        message += f" - {said}"
    default = openai.InternalServerError if response.status_code >= 500 else openai.APIStatusError
    return _STATUS_ERRORS.get(response.status_code, default)(message, response=response, body=data)


def redirected(request: httpx2.Request, response: httpx2.Response) -> httpx2.Request:
    """The next hop of a redirect, as HTTP clients make it: 307 and 308 repeat the POST with its
    body, the others become a GET; the key stays with the endpoint's own origin."""
    url = request.url.join(response.headers["location"])
    headers = httpx2.Headers(request.headers)
    if (url.scheme, url.host, url.port) != (request.url.scheme, request.url.host, request.url.port):
        headers.pop("authorization", None)
    if response.status_code in (307, 308):
        return httpx2.Request("POST", url, headers=headers, content=request.content, extensions=request.extensions)
    for name in ("content-length", "content-type", "transfer-encoding"):
        headers.pop(name, None)
    return httpx2.Request("GET", url, headers=headers, extensions=request.extensions)


class ModelPost:
    """``post(path, body)`` on ``client``'s endpoint through ``http`` (the client the SDK was
    given): the response, read unless ``stream``."""

    def __init__(self, client: openai.AsyncOpenAI, http: httpx2.AsyncClient) -> None:
        self._http = http
        self._transport = http.model_transport if isinstance(http, ModelHttpClient) else None
        self._base = str(client.base_url).rstrip("/")
        headers = {**client.default_headers, **client.auth_headers}
        self._headers = {k: v for k, v in headers.items() if isinstance(v, str)}  # ``Omit`` drops a header
        timeout = client.timeout if isinstance(client.timeout, httpx2.Timeout) else httpx2.Timeout(client.timeout)
        self._timeout = timeout.as_dict()
        self._max_retries = client.max_retries
        self._urls: dict[str, httpx2.URL] = {}

    def _request(self, path: str, content: bytes, attempt: int) -> httpx2.Request:
        headers = dict(self._headers)
        headers["X-Stainless-Retry-Count"] = str(attempt)
        url = self._urls.get(path)
        if url is None:  # parsed once per path (a client posts to one or two)
            url = self._urls[path] = httpx2.URL(self._base + path)
        return httpx2.Request("POST", url, headers=headers, content=content, extensions={"timeout": self._timeout})

    async def post(self, path: str, body: dict[str, Any], *, stream: bool = False) -> httpx2.Response:
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            request = self._request(path, content, attempt)
            try:  # not streamed: the body is read here, so a cut body is retried like a refused connection
                response = await self._send(request, stream)
            except httpx2.TimeoutException as exc:
                if not last:
                    await self._sleep(attempt, None)
                    continue
                raise openai.APITimeoutError(request=request) from exc
            except _REQUEST_ERRORS as exc:
                if not last:
                    await self._sleep(attempt, None)
                    continue
                raise openai.APIConnectionError(request=request) from exc
            if response.status_code >= 400:
                if not last and should_retry(response):
                    await response.aclose()
                    await self._sleep(attempt, response.headers)
                    continue
                if not response.is_closed:
                    await response.aread()
                raise status_error(response) from None
            return response
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _send(self, request: httpx2.Request, stream: bool) -> httpx2.Response:
        if self._transport is None:
            return await self._http.send(request, stream=stream)
        response = await self._transport.handle_async_request(request)
        response.request = request
        # The line httpx2's ``send`` writes for each request: an operator's record of the model
        # calls of a question (it carries the question's trace and record ids).
        log.info(
            'HTTP Request: POST %s "%s %d %s"', request.url, "HTTP/1.1", response.status_code, response.reason_phrase
        )
        if response.has_redirect_location:
            await response.aclose()
            return await self._http.send(redirected(request, response), stream=stream)
        if not stream:
            try:
                await response.aread()
            except BaseException:
                await response.aclose()
                raise
        return response

    async def _sleep(self, retries_done: int, headers: httpx2.Headers | None) -> None:
        seconds = retry_delay(retries_done, headers)
        log.info("Retrying request in %f seconds (%d retries left)", seconds, self._max_retries - retries_done - 1)
        await anyio.sleep(seconds)
