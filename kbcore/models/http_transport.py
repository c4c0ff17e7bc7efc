"""The HTTP client under every ``openai`` SDK client we build: aiohttp's, behind httpx2's API.

The SDK sends through httpx2, whose default transport (httpcore2 on anyio) spends a cancel
scope and a stack of Python frames on every read; at 64 chats the model calls were a quarter
of the chat service's CPU and a third of the retrieval service's, most of it in that
transport (issue 18). aiohttp parses HTTP in C: with it under the same SDK calls, CPU per
question of the four processes fell by 2.4-3.5 ms of about 45 (README, Throughput).

The SDK ships an aiohttp transport of its own (the ``aiohttp`` extra,
``openai.DefaultAioHttpClient``), but it maps a refused connection to a connect *timeout* (so
an endpoint that is down would be reported as slow), and ignores the proxy variables httpx2
honours; this one maps each aiohttp failure to the httpx2 error that names it, and reads
``HTTP(S)_PROXY``/``NO_PROXY`` as before. It reads them once per endpoint, not through aiohttp's
``trust_env``, which reads them again, and ``~/.netrc`` besides, on a worker thread for every
request: two thread hops per model call, ~10% of the retrieval service's CPU at 64 chats
(issue 18), and a netrc entry for the endpoint's host would make aiohttp refuse every request,
since the SDK's ``Authorization`` header and netrc's credentials cannot both be sent.

The SDK's rules still decide timeouts, retries and errors (applied by ``sdk_post.SdkPost``): each
request carries the client's connect and read timeouts (a stalled stream ends at the read
timeout), what httpx2's errors say is retryable is retried, and the rest becomes the SDK's own
``APIConnectionError``/``APITimeoutError``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import aiohttp
import httpx2
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from kbcore.tracing import instrument_http_client

# As the SDK's own client: enough connections for every chat at once (aiohttp's default is 100).
MAX_CONNECTIONS = 1000
# Below the 5 s keep-alive of common servers (uvicorn, many proxies): a connection idle this
# long is closed by us first, so a request never goes out on one the server is closing.
KEEPALIVE_SECONDS = 4.0


def model_http_client() -> httpx2.AsyncClient:
    """An httpx2 client sending through aiohttp, for ``openai.AsyncOpenAI(http_client=...)``.
    Closing the SDK client closes it (and its connections)."""
    client = httpx2.AsyncClient(transport=AiohttpTransport(), follow_redirects=True)
    instrument_http_client(client)
    return client


@contextlib.contextmanager
def _as_httpx2_errors() -> Iterator[None]:
    """aiohttp's failures as the httpx2 errors the SDK understands, most specific first: a
    connect timeout is a timeout, a refused or unresolvable host a connect error, a dropped
    connection a protocol error (retried by the SDK), a cut body a read error."""
    try:
        yield
    except aiohttp.ConnectionTimeoutError as exc:
        raise httpx2.ConnectTimeout(str(exc) or "connect timed out") from exc
    except (aiohttp.ServerTimeoutError, TimeoutError) as exc:
        raise httpx2.ReadTimeout(str(exc) or "read timed out") from exc
    except aiohttp.ClientConnectorError as exc:
        raise httpx2.ConnectError(str(exc)) from exc
    except aiohttp.ServerDisconnectedError as exc:
        raise httpx2.RemoteProtocolError(str(exc) or "the server closed the connection") from exc
    except aiohttp.InvalidURL as exc:
        raise httpx2.UnsupportedProtocol(str(exc)) from exc
    except aiohttp.ClientError as exc:
        raise httpx2.ReadError(str(exc) or type(exc).__name__) from exc


class _Body(httpx2.AsyncByteStream):
    """A response body as aiohttp receives it: each piece as soon as it arrives (an answer's
    stream must not wait for a buffer to fill)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx2_errors():
            async for piece in self._response.content.iter_any():
                yield piece

    async def aclose(self) -> None:
        # A body left unread closes its connection, so the server sees the request end (an
        # answer the user stopped); a body read to the end returns it to the pool.
        if self._response.content.at_eof():
            self._response.release()
        else:
            self._response.close()


class _EnvProxies:
    """The proxy the environment names for each endpoint (``HTTP(S)_PROXY``, ``NO_PROXY``), by
    aiohttp's own reading of it, looked up at an endpoint's first request and kept: a process
    calls a handful of endpoints, and its environment does not change under it."""

    def __init__(self) -> None:
        self._by_origin: dict[tuple[str, str | None, int | None], tuple[URL | None, aiohttp.BasicAuth | None]] = {}

    def for_url(self, url: URL) -> tuple[URL | None, aiohttp.BasicAuth | None]:
        origin = (url.scheme, url.host, url.port)
        found = self._by_origin.get(origin)
        if found is None:
            try:
                found = get_env_proxy_for_url(url)
            except LookupError:  # no proxy for this scheme, or NO_PROXY names the host
                found = (None, None)
            self._by_origin[origin] = found
        return found


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """One aiohttp session, opened at the first request (it belongs to the running loop)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._proxies = _EnvProxies()

    def _opened(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_SECONDS)
            # No cookies: an endpoint's Set-Cookie must not follow one caller's request into another's.
            self._session = aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        timeout = request.extensions.get("timeout", {})
        try:
            body: bytes | httpx2.AsyncByteStream | None = request.content or None
        except httpx2.RequestNotRead:  # a streamed upload: aiohttp sends it chunked itself
            body = request.stream  # type: ignore[assignment]
            request.headers.pop("transfer-encoding", None)
        url = URL(str(request.url))
        proxy, proxy_auth = self._proxies.for_url(url)
        with _as_httpx2_errors():
            response = await self._opened().request(
                request.method,
                url,
                proxy=proxy,
                proxy_auth=proxy_auth,
                headers=request.headers.multi_items(),
                data=body,
                allow_redirects=False,  # httpx2 follows them, as it always did
                auto_decompress=False,  # httpx2 decodes by Content-Encoding
                timeout=aiohttp.ClientTimeout(
                    sock_connect=timeout.get("connect"), sock_read=timeout.get("read"), connect=timeout.get("pool")
                ),
            )
        extensions = {"http_version": b"HTTP/1.1"}
        if response.reason:
            extensions["reason_phrase"] = response.reason.encode()
        return httpx2.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_Body(response),
            request=request,
            extensions=extensions,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
