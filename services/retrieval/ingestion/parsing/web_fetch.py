"""Fetch one web page (or a document a URL points at) to ingest, without becoming an SSRF proxy.

An operator types a URL; the retrieval service fetches it from inside the deployment's network.
Left unguarded, that request could read cloud metadata (169.254.169.254), an admin port on
localhost or any intranet service, and hand the answer back as "document" paragraphs. So:

* only ``http``/``https``, no credentials in the URL, no absurdly long URLs;
* the host is resolved here, once, and *every* address it resolves to must be public unless the
  operator allowed the host name or its network (``KB_FETCH_ALLOW_HOSTS``);
* the connection goes to the address that was checked (the URL is rewritten to that IP, the
  original name travels in the ``Host`` header and, for TLS, as SNI so the certificate is still
  verified against the name), so a DNS answer that changes between check and connect (rebinding)
  changes nothing;
* redirects are followed by hand, at most :data:`MAX_REDIRECTS`, each hop checked like the first;
* one deadline covers the whole fetch, the body is read as a stream and abandoned past the limit,
  and only content types a parser can take are accepted.

Every refusal is an :class:`~kbcore.errors.InvalidRequest` with a sentence a person can act on;
no message carries an address the resolver produced, an exception text or a traceback.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
import ssl
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

import httpx

from kbcore.errors import InvalidRequest
from kbcore.words.said import Said, said

if TYPE_CHECKING:
    from kbcore.settings import Settings

MAX_URL_LENGTH = 2000
MAX_REDIRECTS = 5
ALLOW_SETTING = "KB_FETCH_ALLOW_HOSTS"
_REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_USER_AGENT = "kb-document-fetch/1.0"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# Content type → suffix of the stored document; the suffix is what the parsers dispatch on.
CONTENT_SUFFIXES: dict[str, str] = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "text/csv": ".csv",
    "application/csv": ".csv",
    "application/pdf": ".pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": ".xlsx",
    "application/vnd.ms-excel": ".xls",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
}
# Servers often label files "application/octet-stream"; then the URL's own suffix decides, and
# only for binary document formats (the parser's sniffing checks that the bytes agree).
_GENERIC_TYPES = frozenset({"application/octet-stream", "binary/octet-stream", "application/download", ""})
_SUFFIXES_TRUSTED_FROM_URL = frozenset({".pdf", ".docx", ".xlsx", ".xls", ".pptx", ".csv"})
# Suffixes dropped from a URL's last path segment before the content type's suffix is added.
_URL_SUFFIXES_DROPPED = frozenset(
    {".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp", ".cgi", ".txt", ".md", ".markdown"}
    | set(CONTENT_SUFFIXES.values())
)
_MAX_NAME_CHARS = 100
_MAX_VALIDATOR_CHARS = 100  # a longer validator is not kept: the next sync then fetches the page whole
_ACCEPT = ", ".join([*CONTENT_SUFFIXES, "*/*;q=0.1"])


class FetchError(InvalidRequest):
    """A URL could not be turned into a document; the message says why in the operator's terms."""


class FetchRefused(FetchError):
    """The URL (or where it led) is not allowed: scheme, credentials, private address, size, type."""


class FetchFailed(FetchError):
    """The page itself failed: no answer in time, an error status, nobody listening, unknown host."""


class FetchGone(FetchFailed):
    """The server says the page is not there (404 Not Found, 410 Gone)."""


@dataclass(frozen=True)
class FetchPolicy:
    """What a fetch may do. ``allow`` holds host names and IP networks exempt from the
    private-address rule, as the operator wrote them in ``KB_FETCH_ALLOW_HOSTS``."""

    timeout: float
    max_bytes: int
    allow: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Parse now so a malformed network fails at start-up, not silently at the first fetch.
        _parse_allow(self.allow)

    @classmethod
    def from_settings(cls, settings: Settings) -> FetchPolicy:
        """The deployment's policy: its fetch timeout, the upload size limit, its allow-list."""
        allow = tuple(part.strip() for part in settings.fetch_allow_hosts.split(",") if part.strip())
        return cls(timeout=settings.fetch_timeout, max_bytes=settings.upload_max_mb * 1024 * 1024, allow=allow)


@dataclass(frozen=True)
class FetchedPage:
    """A fetched body and what the ingestion needs to treat it as an uploaded file."""

    url: str  # final URL after redirects, as the user would type it (never the pinned IP)
    content_type: str  # media type without parameters, lower case
    data: bytes
    filename: str  # safe name from the URL path, suffix chosen by the content type
    etag: str = ""  # the validators a later conditional request sends back ("" = none given)
    modified: str = ""  # Last-Modified, as the server wrote it


@dataclass(frozen=True)
class Validators:
    """What the server said about the copy we hold: asked again with these, an unchanged page
    answers 304 Not Modified, with no body to read, parse or embed."""

    etag: str = ""
    modified: str = ""

    def headers(self) -> dict[str, str]:
        found = {"If-None-Match": self.etag, "If-Modified-Since": self.modified}
        return {name: value for name, value in found.items() if value}


@dataclass(frozen=True)
class NotModified:
    """The page is as it was when ``Validators`` were given (304 Not Modified)."""

    url: str


class Resolver(Protocol):
    """Resolves a host to its addresses; replaceable so tests can prove what is connected to."""

    async def __call__(self, host: str, port: int) -> list[IPAddress]: ...


@dataclass(frozen=True)
class _Allow:
    hosts: frozenset[str]
    networks: tuple[IPNetwork, ...]

    def covers_host(self, host: str) -> bool:
        return _normal_host(host) in self.hosts

    def covers_address(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.networks)


def _normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def _parse_allow(entries: Iterable[str]) -> _Allow:
    """Split allow-list entries into networks (an IP is a one-address network) and host names."""
    hosts: set[str] = set()
    networks: list[IPNetwork] = []
    for raw in entries:
        entry = _normal_host(raw)
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if "/" in entry:
                raise ValueError(f"{ALLOW_SETTING}: {raw!r} is not a valid network") from None
            hosts.add(entry)
    return _Allow(frozenset(hosts), tuple(networks))


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo, NAT64): they are where the
    packets really end up, so they are judged too."""
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in ipaddress.ip_network("64:ff9b::/96"):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


def is_public_address(address: IPAddress) -> bool:
    """True for an address on the public internet; False for private, loopback, link-local,
    multicast, reserved, unspecified, shared (CGNAT) and IPv6 forms wrapping any of those."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if address.ipv4_mapped is not None:
            return is_public_address(address.ipv4_mapped)
        if embedded and not all(is_public_address(inner) for inner in embedded):
            return False
        if address.is_site_local:
            return False
    flags = (
        address.is_private,
        address.is_loopback,
        address.is_link_local,
        address.is_multicast,
        address.is_reserved,
        address.is_unspecified,
    )
    return address.is_global and not any(flags)


async def resolve_host(host: str, port: int) -> list[IPAddress]:
    """All TCP addresses of ``host`` in the resolver's order (an IP literal resolves to itself;
    the C resolver also turns forms like ``2130706433`` or ``0x7f.1`` into their address)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def _check_url(url: httpx.URL, shown: str) -> None:
    """Refuse what no fetch may touch, before any network traffic."""
    if url.scheme not in ("http", "https"):
        scheme = url.scheme or "no scheme"
        raise FetchRefused(said("only_http_https_pages_can_be_2", shown=shown, scheme=scheme))
    if url.userinfo:
        raise FetchRefused(said("url_user_name_password_not_accepted", shown=shown))
    if not url.host:
        raise FetchRefused(said("url_names_no_host", shown=shown))


def _parse_url(text: str) -> httpx.URL:
    """Parse what the user typed (or a redirect's target), refusing the unparseable and the huge."""
    text = text.strip()
    if len(text) > MAX_URL_LENGTH:
        raise FetchRefused(
            said("url_characters_long_most_are_accepted", len_text=len(text), max_url_length=MAX_URL_LENGTH)
        )
    try:
        url = httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError):
        raise FetchRefused(said("not_valid_url", text_200=f"{text[:200]!r}")) from None
    _check_url(url, _shown(url))
    return url.copy_with(fragment=None)


def _shown(url: httpx.URL) -> str:
    """The URL as it may appear in a message: what was typed or redirected to, minus the fragment
    and any credentials (which must never be echoed into logs or the document list)."""
    return str(url.copy_with(fragment=None, userinfo=b""))[:300]


async def _checked_addresses(url: httpx.URL, allow: _Allow, resolver: Resolver) -> list[IPAddress]:
    """Resolve once and refuse unless every address is public or allowed; the result is what the
    connection will use, so nothing is resolved again afterwards."""
    host = url.raw_host.decode("ascii")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        addresses = await resolver(host, port)
    except (socket.gaierror, UnicodeError, ValueError):
        raise FetchFailed(said("host_was_not_found", url_host=url.host, shown_url=_shown(url))) from None
    if not addresses:
        raise FetchFailed(said("host_was_not_found", url_host=url.host, shown_url=_shown(url)))
    if allow.covers_host(host):
        return addresses
    if any(not is_public_address(a) and not allow.covers_address(a) for a in addresses):
        raise FetchRefused(
            said(
                "points_private_loopback_address_host_pages",
                shown_url=_shown(url),
                url_host=url.host,
                allow_setting=ALLOW_SETTING,
            )
        )
    return addresses


def _pinned_request(
    client: httpx.AsyncClient, url: httpx.URL, address: IPAddress, validators: Validators
) -> httpx.Request:
    """A GET sent to ``address`` while naming the original host in Host and in TLS SNI (httpcore's
    ``sni_hostname`` extension), so the certificate is still checked against the host name."""
    target = url.copy_with(host=str(address))
    headers = {"Host": url.netloc.decode("ascii"), "Accept": _ACCEPT, "User-Agent": _USER_AGENT}
    headers |= validators.headers()
    return client.build_request("GET", target, headers=headers, extensions={"sni_hostname": url.raw_host.decode()})


async def _send_pinned(
    client: httpx.AsyncClient, url: httpx.URL, addresses: list[IPAddress], shown: str, validators: Validators
) -> httpx.Response:
    """Connect to the checked addresses in order until one answers (a name with IPv6 and IPv4
    addresses may only listen on one); the response is streamed, not read."""
    for address in addresses[:-1]:
        try:
            return await client.send(_pinned_request(client, url, address, validators), stream=True)
        except httpx.ConnectError:
            continue
    try:
        return await client.send(_pinned_request(client, url, addresses[-1], validators), stream=True)
    except httpx.ConnectError as exc:
        raise FetchFailed(
            said("page_could_not_be_reached", shown=shown, connect_reason_exc_url_host=_connect_reason(exc, url.host))
        ) from None


def _connect_reason(exc: BaseException, host: str) -> Said:
    """Name why a connection failed in words (refused, certificate, TLS) without exception text."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return said("refused_connection", host=host)
        if isinstance(seen, ssl.SSLCertVerificationError):
            return said("tls_certificate_could_not_be_verified", host=host)
        if isinstance(seen, ssl.SSLError):
            return said("tls_handshake_failed", host=host)
        seen = seen.__cause__ or seen.__context__
    return said("connection_failed", host=host)


async def _follow(
    client: httpx.AsyncClient, start: httpx.URL, policy: FetchPolicy, resolver: Resolver, validators: Validators
) -> tuple[httpx.URL, httpx.Response]:
    """Follow redirects by hand so each hop is checked like the first; return the final URL and
    its (streaming, still open) response."""
    allow = _parse_allow(policy.allow)
    shown_start = _shown(start)
    url = start
    for hop in range(MAX_REDIRECTS + 1):
        addresses = await _checked_addresses(url, allow, resolver)
        response = await _send_pinned(client, url, addresses, shown_start, validators)
        location = response.headers.get("location")
        if response.status_code not in _REDIRECT_CODES or location is None:
            return url, response
        await response.aclose()
        if hop == MAX_REDIRECTS:
            break
        try:
            url = _parse_url(str(url.join(location.strip())))
        except (httpx.InvalidURL, ValueError):
            raise FetchFailed(said("page_redirects_invalid_url", shown_start=shown_start)) from None
    raise FetchRefused(said("page_redirects_more_times", shown_start=shown_start, max_redirects=MAX_REDIRECTS))


def _media_type(response: httpx.Response) -> str:
    return str(response.headers.get("content-type", "")).split(";", 1)[0].strip().lower()


def _suffix_for(media_type: str, url: httpx.URL, shown: str) -> str:
    """The stored document's suffix: from the content type, or for a generic binary type from a
    document suffix on the URL; anything else is refused naming the type."""
    if media_type in CONTENT_SUFFIXES:
        return CONTENT_SUFFIXES[media_type]
    if media_type in _GENERIC_TYPES:
        url_suffix = _split_suffix(_last_segment(url))[1]
        if url_suffix in _SUFFIXES_TRUSTED_FROM_URL:
            return url_suffix
    if not media_type:
        raise FetchRefused(said("page_no_content_type_only_web", shown=shown))
    raise FetchRefused(said("page_only_web_pages_html_plain", shown=shown, named=media_type))


def _check_status(response: httpx.Response, shown: str) -> None:
    """Only a 2xx is a page; a 3xx that could not be followed (no Location, 304) is not one either."""
    if 200 <= response.status_code < 300:
        return
    failed = FetchGone if response.status_code in (404, 410) else FetchFailed
    code = response.status_code
    try:  # HTTP's reason phrase ("Not Found") is protocol words, kept as they are in every language
        words = said("page_answered", shown=shown, response_status_code=code, phrase=HTTPStatus(code).phrase)
    except ValueError:
        words = said("page_answered_error", shown=shown, response_status_code=code)
    raise failed(words)


async def _read_bounded(response: httpx.Response, max_bytes: int, shown: str) -> bytes:
    """Read the (decoded) body, abandoning it as soon as it passes ``max_bytes``: a huge or
    endless body, or a compression bomb, costs at most one network chunk past the limit."""
    refused = FetchRefused(said("page_larger_limit", shown=shown, size_max_bytes=_size(max_bytes)))
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise refused
    chunks: list[bytes] = []
    total = 0
    async for chunk in response.aiter_bytes():
        total += len(chunk)
        if total > max_bytes:
            raise refused
        chunks.append(chunk)
    return b"".join(chunks)


def _size(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    return f"{n} bytes"


def _last_segment(url: httpx.URL) -> str:
    segments = [s for s in url.path.split("/") if s]
    return unquote(segments[-1]) if segments else ""


def _split_suffix(name: str) -> tuple[str, str]:
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return name, ""
    return stem, f".{ext.lower()}"


def safe_filename(url: httpx.URL, suffix: str) -> str:
    """A document name from the URL's last path segment (or its host), reduced to letters, digits
    and ``-_.`` so it is safe in any listing or path, ending in ``suffix``."""
    stem, ext = _split_suffix(_last_segment(url))
    if ext and ext not in _URL_SUFFIXES_DROPPED:
        stem = f"{stem}{ext}"
    stem = unicodedata.normalize("NFC", stem)
    stem = re.sub(r"[^\w.\-]+", "-", stem, flags=re.UNICODE).strip("-._")[:_MAX_NAME_CHARS]
    if not stem:
        stem = re.sub(r"[^\w.\-]+", "-", url.host).strip("-._")[:_MAX_NAME_CHARS] or "page"
    return f"{stem}{suffix}"


async def fetch_page(
    url: str,
    policy: FetchPolicy,
    *,
    resolver: Resolver | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> FetchedPage:
    """Fetch ``url`` under ``policy`` and return its body as a document to ingest.

    Raises :class:`FetchRefused` for what the policy forbids and :class:`FetchFailed` when the
    page does not deliver; both are ``InvalidRequest`` with a message meant for the operator.
    ``resolver`` and ``transport`` exist for tests (and are the only places DNS and sockets are
    touched)."""
    fetched = await fetch_if_changed(url, policy, Validators(), resolver=resolver, transport=transport)
    assert isinstance(fetched, FetchedPage)  # asked without validators, no server answers 304
    return fetched


async def fetch_if_changed(
    url: str,
    policy: FetchPolicy,
    validators: Validators,
    *,
    resolver: Resolver | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> FetchedPage | NotModified:
    """``fetch_page`` as a conditional request: ``NotModified`` when the server says the page is
    still the one ``validators`` describe, the page otherwise (:class:`FetchGone` when it says
    the page is not there)."""
    start = _parse_url(url)
    shown = _shown(start)
    try:
        async with asyncio.timeout(policy.timeout):
            return await _fetch(start, policy, resolver or resolve_host, transport, validators)
    except (TimeoutError, httpx.TimeoutException):
        raise FetchFailed(
            said("page_did_not_answer_within_s", shown=shown, policy_timeout=f"{policy.timeout:g}")
        ) from None
    except httpx.HTTPError:
        raise FetchFailed(said("page_could_not_be_fetched_connection", shown=shown)) from None


async def _fetch(
    start: httpx.URL,
    policy: FetchPolicy,
    resolver: Resolver,
    transport: httpx.AsyncBaseTransport | None,
    validators: Validators,
) -> FetchedPage | NotModified:
    """One fetch inside the deadline: follow, check status and type, read within the limit."""
    shown = _shown(start)
    # trust_env=False: no proxy from the environment (it would resolve the name itself and undo
    # the pinning) and no .netrc credentials sent to arbitrary hosts. No keep-alive: connections
    # are pooled by IP, and a TLS connection verified for one host name must not carry a request
    # for another name on the same address after a redirect.
    async with httpx.AsyncClient(
        transport=transport,
        timeout=policy.timeout,
        follow_redirects=False,
        trust_env=False,
        limits=httpx.Limits(max_keepalive_connections=0),
    ) as client:
        final, response = await _follow(client, start, policy, resolver, validators)
        try:
            if response.status_code == 304 and validators.headers():
                return NotModified(str(final))
            _check_status(response, shown)
            media_type = _media_type(response)
            suffix = _suffix_for(media_type, final, shown)
            data = await _read_bounded(response, policy.max_bytes, shown)
            etag, modified = response.headers.get("etag", ""), response.headers.get("last-modified", "")
        finally:
            await response.aclose()
    return FetchedPage(
        url=str(final),
        content_type=media_type,
        data=data,
        filename=safe_filename(final, suffix),
        etag=etag if len(etag) <= _MAX_VALIDATOR_CHARS else "",
        modified=modified if len(modified) <= _MAX_VALIDATOR_CHARS else "",
    )
