"""The HTTP client under every ``openai`` SDK client we build: aiohttp's, behind httpx2's public
transport API (``httpx2.AsyncBaseTransport``).

The SDK sends through httpx2, whose default transport (httpcore2 on anyio) spends a cancel scope
and a stack of Python frames on every read; aiohttp parses HTTP in C, and under the same SDK
calls it costs markedly less CPU (docs/decisions/aiohttp.md).

The SDK ships an aiohttp client of its own (``openai.DefaultAioHttpClient``, the ``aiohttp``
extra), and this module would go if it did what we need. It does not, in the installed release:
it reports a refused connection (and a dropped one) as a connect *timeout*, so an endpoint that
is down would be told as slow, and it keeps the endpoint's cookies (in httpx2's jar and in
aiohttp's) and sends them with the next caller's request. Both are fixes that belong upstream;
until then this transport is the shim, and ``tests/unit/test_http_transport.py`` keeps both
behaviours. It also reads ``HTTP(S)_PROXY``/``NO_PROXY`` once per endpoint (through the
standard library, as httpx2 does for its own transport) rather than through aiohttp's
``trust_env``, which reads them and ``~/.netrc`` again on a worker thread for every request, and
would refuse every request to a host netrc names (the SDK's ``Authorization`` header and netrc's
credentials cannot both be sent).

The SDK's rules still decide timeouts, retries and errors: each request carries the client's
connect and read timeouts (a stalled stream ends at the read timeout), and each aiohttp failure
is raised as the httpx2 error that names it, which the SDK retries or turns into its own
``APIConnectionError``/``APITimeoutError``.
"""

from __future__ import annotations

import contextlib
import urllib.request
from collections.abc import AsyncIterator, Iterator
from http.cookiejar import CookieJar, DefaultCookiePolicy

import aiohttp
import httpx2
from yarl import URL

from kbcore.telemetry.tracing import instrument_http_client

# As the SDK's own client: enough connections for every chat at once (aiohttp's default is 100).
MAX_CONNECTIONS = 1000
# Below the 5 s keep-alive of common servers (uvicorn, many proxies): a connection idle this
# long is closed by us first, so a request never goes out on one the server is closing.
KEEPALIVE_SECONDS = 4.0


class ModelHttpClient(httpx2.AsyncClient):
    """An httpx2 client sending through aiohttp, for ``openai.AsyncOpenAI(http_client=...)``, that
    names its transport: our own requests (``kbcore.models.model_post``) go to it directly.
    Closing the SDK client closes it (and its connections)."""

    def __init__(self) -> None:
        self.model_transport = AiohttpTransport()
        # No cookies: an endpoint's Set-Cookie must not follow one caller's request into another's.
        no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        super().__init__(transport=self.model_transport, follow_redirects=True, cookies=no_cookies)
        # Tracing wraps this transport object's method, so the direct requests are traced too.
        instrument_http_client(self)


def model_http_client() -> ModelHttpClient:
    """The HTTP client of a model endpoint's ``openai`` client."""
    return ModelHttpClient()


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
    """The proxy the environment names for each endpoint (``HTTP(S)_PROXY``, ``NO_PROXY``), looked
    up at an endpoint's first request and kept: a process calls a handful of endpoints, and its
    environment does not change under it."""

    def __init__(self) -> None:
        self._by_origin: dict[tuple[str, str | None, int | None], tuple[URL | None, str | None]] = {}

    def for_url(self, url: URL) -> tuple[URL | None, str | None]:
        origin = (url.scheme, url.host, url.port)
        found = self._by_origin.get(origin)
        if found is None:
            found = self._by_origin[origin] = _env_proxy(url)
        return found


def _env_proxy(url: URL) -> tuple[URL | None, str | None]:
    """The proxy for ``url`` and its ``Proxy-Authorization`` (when the proxy's URL gives
    credentials), or none when no variable names one for the scheme or ``NO_PROXY`` names the host."""
    named = urllib.request.getproxies().get(url.scheme)
    if not named or urllib.request.proxy_bypass(url.host or ""):
        return None, None
    proxy = URL(named if "://" in named else f"http://{named}")
    if proxy.user is None:
        return proxy, None
    return proxy.with_user(None), aiohttp.encode_basic_auth(proxy.user, proxy.password or "")


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """One aiohttp session, opened at the first request (it belongs to the running loop)."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._proxies = _EnvProxies()

    def _opened(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_SECONDS)
            # No cookies here either (see ``model_http_client``).
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
        proxy, proxy_authorization = self._proxies.for_url(url)
        headers = request.headers.multi_items()
        proxy_headers = None
        if proxy_authorization is not None:  # for the tunnel to an https endpoint, else on the request itself
            if url.scheme == "https":
                proxy_headers = {"Proxy-Authorization": proxy_authorization}
            else:
                headers.append(("Proxy-Authorization", proxy_authorization))
        with _as_httpx2_errors():
            response = await self._opened().request(
                request.method,
                url,
                proxy=proxy,
                proxy_headers=proxy_headers,
                headers=headers,
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
