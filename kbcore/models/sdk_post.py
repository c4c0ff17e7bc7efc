"""A JSON POST to an OpenAI-compatible endpoint as the ``openai`` client's own ``post`` sends
it, without the client's per-request machinery.

Every model and embeddings call (rewrite, assess, the answer stream, a query's embedding) went
through ``AsyncOpenAI.post``, which builds each request through pydantic option models, deep
copies of them per attempt, header and URL merging and an auth-retry layer: about 1 ms of CPU
per call on this machine, against 0.2 ms for the HTTP exchange itself (measured with 32 calls
at once against the bench's model server, issue 18), and a question makes three or four.

``SdkPost`` takes from a configured client what a request is made of — base URL, key and default
headers, timeout, retry count — once, and drives the attempts with the client's own rules: which
failures and statuses are retried (``_should_retry``: connection errors, timeouts, 408, 409, 429,
5xx, ``x-should-retry``), how long to wait (``_calculate_retry_timeout``: ``Retry-After`` or
backoff with jitter), and the exception each failure becomes (``APITimeoutError``,
``APIConnectionError``, the ``APIStatusError`` subclass of the status). Callers keep catching
``openai.OpenAIError`` as before.

The request goes straight to the transport of the client's httpx2 client (our aiohttp transport,
and its tracing, which wraps the transport): httpx2's ``send`` around it (auth and redirect
flows, a cookie jar, a wrapper per response body) cost another 0.2 ms per call. A redirect, which
no model endpoint we know sends, is followed by that ``send`` from the second hop on; the cookie
jar is left out on purpose (an endpoint's cookie must not follow one caller's request into
another's, as the aiohttp session's ``DummyCookieJar`` already says). The INFO line ``send``
logged for each request is logged here, in the same words.
"""

from __future__ import annotations

import json
import logging
import ssl
from typing import Any

import anyio
import httpx2
import openai
from httpx2._exceptions import request_context as httpx2_request_context
from openai._models import FinalRequestOptions

log = logging.getLogger(__name__)

# What the client treats as a failed exchange, besides timeouts (its ``request_exceptions``).
_REQUEST_ERRORS = (httpx2.RequestError, ssl.SSLError, anyio.EndOfStream)


class SdkPost:
    """``post(path, body)`` on ``client``'s endpoint: the response, read unless ``stream``."""

    def __init__(self, client: openai.AsyncOpenAI) -> None:
        self._client = client
        self._http: httpx2.AsyncClient = client._client
        self._base = str(client.base_url).rstrip("/")
        headers = {**client.default_headers, **client.auth_headers}
        self._headers = {k: v for k, v in headers.items() if isinstance(v, str)}  # ``Omit`` drops a header
        timeout = client.timeout if isinstance(client.timeout, httpx2.Timeout) else httpx2.Timeout(client.timeout)
        self._timeout = timeout.as_dict()
        self._max_retries = client.max_retries
        self._options = FinalRequestOptions.construct(method="post", url="")  # the client's retry count
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
            remaining = self._max_retries - attempt
            request = self._request(path, content, attempt)
            try:  # not streamed: the body is read here, so a cut body is retried like a refused connection
                response = await self._send(request, stream)
            except httpx2.TimeoutException as exc:
                if remaining > 0:
                    await self._sleep(remaining, None)
                    continue
                raise openai.APITimeoutError(request=request) from exc
            except _REQUEST_ERRORS as exc:
                if remaining > 0:
                    await self._sleep(remaining, None)
                    continue
                raise openai.APIConnectionError(request=request) from exc
            if response.status_code >= 400:
                if remaining > 0 and self._client._should_retry(response):
                    await response.aclose()
                    await self._sleep(remaining, response.headers)
                    continue
                if not response.is_closed:
                    await response.aread()
                raise self._client._make_status_error_from_response(response) from None
            return response
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _send(self, request: httpx2.Request, stream: bool) -> httpx2.Response:
        """The response as the httpx2 client's ``send`` returns it, for the requests we make."""
        transport = self._http._transport_for_url(request.url)
        with httpx2_request_context(request=request):  # an httpx2 error names its request, as in ``send``
            response = await transport.handle_async_request(request)
        response.request = request
        # The line httpx2's ``send`` wrote for each request: an operator's record of the model
        # calls of a question (it carries the question's trace and record ids).
        log.info(
            'HTTP Request: POST %s "%s %d %s"', request.url, "HTTP/1.1", response.status_code, response.reason_phrase
        )
        if response.has_redirect_location:  # the next hop as httpx2 builds it, and the rest by ``send``
            await response.aclose()
            return await self._http.send(self._http._build_redirect_request(request, response), stream=stream)
        if not stream:
            try:
                await response.aread()
            except BaseException:
                await response.aclose()
                raise
        return response

    async def _sleep(self, remaining: int, headers: httpx2.Headers | None) -> None:
        seconds = self._client._calculate_retry_timeout(remaining, self._options, headers)
        log.info("Retrying request in %f seconds (%d retries left)", seconds, remaining - 1)
        await anyio.sleep(seconds)
