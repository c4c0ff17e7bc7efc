"""Fetching a web page to ingest: a real local HTTP server, and the SSRF guard around it.

The server runs in a thread on 127.0.0.1 (a loopback address, so every fetch of it must be
allowed explicitly — which is itself the first thing tested). Resolvers are replaced where a test
must prove *which* address was connected to: a name that only the fake resolver knows can only
be reached if the connection used the checked address instead of asking DNS again.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from kbcore.document_types import SUPPORTED_SUFFIXES
from kbcore.errors import InvalidRequest
from kbcore.settings import Settings
from services.retrieval.ingestion.parsing.web_fetch import (
    CONTENT_SUFFIXES,
    MAX_REDIRECTS,
    FetchedPage,
    FetchFailed,
    FetchGone,
    FetchPolicy,
    FetchRefused,
    IPAddress,
    NotModified,
    Validators,
    fetch_if_changed,
    fetch_page,
    is_public_address,
    safe_filename,
)

PAGE = b"<html><head><title>Price list</title></head><body><p>Widget: 12 EUR</p></body></html>"
ETAG, MODIFIED = '"v1"', "Mon, 30 Nov 2026 08:00:00 GMT"
HUGE_CHUNK = b"x" * 65536
HUGE_TOTAL = 200 * 1024 * 1024  # what /huge would send if nobody stopped reading


@dataclass
class Served:
    """What the handler threads observed, for assertions about the client's behaviour."""

    hosts: list[str] = field(default_factory=list)
    conditions: list[tuple[str, str]] = field(default_factory=list)  # (If-None-Match, If-Modified-Since) of /validated
    huge_sent: int = 0
    closing: threading.Event = field(default_factory=threading.Event)  # set as the site shuts down


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:  # quiet test output
        return

    def _send(self, status: int, body: bytes = b"", content_type: str = "text/html", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.server.served.hosts.append(self.headers.get("Host", ""))
        path = self.path
        if path == "/page":
            self._send(200, PAGE, "text/html; charset=utf-8")
        elif path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, Location="/page" if n <= 1 else f"/redirect/{n - 1}")
        elif path == "/loop":
            self._send(302, Location="/loop")
        elif path == "/to-metadata":
            self._send(302, Location="http://169.254.169.254/latest/meta-data/")
        elif path == "/to-ftp":
            self._send(301, Location="ftp://example.org/file.pdf")
        elif path == "/validated":
            self._validated()
        elif path == "/removed":
            self._send(410, b"gone for good")
        elif path == "/missing":
            self._send(404, b"nope")
        elif path == "/broken":
            self._send(503, b"down")
        elif path == "/slow":
            self.server.served.closing.wait()  # answers only as the site shuts down, long after any timeout
            self._send(200, PAGE)
        elif path == "/trickle":
            self._trickle()
        elif path == "/huge":
            self._huge()
        elif path == "/image.png":
            self._send(200, b"\x89PNG\r\n\x1a\n", "image/png")
        elif path == "/files/report.pdf":
            self._send(200, b"%PDF-1.4\n%%EOF\n", "application/octet-stream")
        elif path == "/echo-host":
            self._send(200, self.headers.get("Host", "").encode(), "text/plain")
        else:
            self._send(404)

    def _validated(self) -> None:
        """A page with validators: asked with either of them, it answers 304 with no body."""
        self.server.served.conditions.append(
            (self.headers.get("If-None-Match", ""), self.headers.get("If-Modified-Since", ""))
        )
        if self.headers.get("If-None-Match") == ETAG or self.headers.get("If-Modified-Since") == MODIFIED:
            self.send_response(304)
            self.send_header("ETag", ETAG)
            self.end_headers()
            return
        self._send(200, PAGE, "text/html; charset=utf-8", ETag=ETAG, Last_Modified=MODIFIED)

    def _trickle(self) -> None:
        """Headers at once, then a byte every 0.1 s: no single read waits long, the whole does."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        try:
            for _ in range(50):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            return

    def _huge(self) -> None:
        """An endless-looking body without Content-Length: only the reader's limit stops it."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            while self.server.served.huge_sent < HUGE_TOTAL:
                self.wfile.write(HUGE_CHUNK)
                self.server.served.huge_sent += len(HUGE_CHUNK)
        except OSError:
            return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    served: Served


@dataclass
class LocalSite:
    port: int
    served: Served

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture(scope="module")
def site() -> Iterator[LocalSite]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.served = Served()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LocalSite(server.server_address[1], server.served)
    finally:
        server.served.closing.set()
        server.shutdown()
        server.server_close()


def _policy(*allow: str, timeout: float = 5.0, max_bytes: int = 1024 * 1024) -> FetchPolicy:
    return FetchPolicy(timeout=timeout, max_bytes=max_bytes, allow=allow)


class FakeResolver:
    """Answers from a table and counts lookups; unknown names fail like DNS does."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        answers = self.table.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        index = min(self.calls.count(host), len(answers) - 1)
        self.calls.append(host)
        return [ipaddress.ip_address(a) for a in answers[index]]


# --- the page itself --------------------------------------------------------------------------


async def test_a_conditional_fetch_of_an_unchanged_page_reads_no_body(site: LocalSite) -> None:
    first = await fetch_if_changed(site.url("/validated"), _policy("127.0.0.1"), Validators())
    assert isinstance(first, FetchedPage) and (first.etag, first.modified, first.data) == (ETAG, MODIFIED, PAGE)
    for validators in (Validators(etag=ETAG), Validators(modified=MODIFIED), Validators(ETAG, MODIFIED)):
        again = await fetch_if_changed(site.url("/validated"), _policy("127.0.0.1"), validators)
        assert again == NotModified(site.url("/validated"))
    assert site.served.conditions == [("", ""), (ETAG, ""), ("", MODIFIED), (ETAG, MODIFIED)]
    stale = await fetch_if_changed(site.url("/validated"), _policy("127.0.0.1"), Validators(etag='"v0"'))
    assert isinstance(stale, FetchedPage) and stale.data == PAGE


@pytest.mark.parametrize(("path", "gone"), [("/missing", True), ("/removed", True), ("/broken", False)])
async def test_a_page_that_is_not_there_is_told_from_one_that_failed(site: LocalSite, path: str, gone: bool) -> None:
    with pytest.raises(FetchFailed) as failed:
        await fetch_if_changed(site.url(path), _policy("127.0.0.1"), Validators(etag=ETAG))
    assert isinstance(failed.value, FetchGone) is gone


async def test_loopback_page_is_refused_unless_allowed(site: LocalSite) -> None:
    before = len(site.served.hosts)
    with pytest.raises(FetchRefused) as refused:
        await fetch_page(site.url("/page"), _policy())
    message = str(refused.value)
    assert "private or loopback" in message
    assert "KB_FETCH_ALLOW_HOSTS" in message
    assert len(site.served.hosts) == before, "a refused fetch must not reach the server"
    assert isinstance(refused.value, InvalidRequest)


@pytest.mark.parametrize("allow", ["127.0.0.1", "127.0.0.0/8", " 127.0.0.1 "])
async def test_allowed_loopback_page_is_fetched(site: LocalSite, allow: str) -> None:
    page = await fetch_page(site.url("/page#section"), _policy(allow))
    assert page == FetchedPage(url=site.url("/page"), content_type="text/html", data=PAGE, filename="page.html")


async def test_allowed_by_host_name(site: LocalSite) -> None:
    """A name in the allow-list covers whatever it resolves to (here a loopback address)."""
    resolver = FakeResolver({"intranet.example": [["127.0.0.1"]]})
    page = await fetch_page(site.url("/page", "intranet.example"), _policy("intranet.example"), resolver=resolver)
    assert page.data == PAGE
    with pytest.raises(FetchRefused):
        await fetch_page(site.url("/page", "intranet.example"), _policy("other.example"), resolver=resolver)


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://2130706433/",  # 127.0.0.1 written as one number
        "http://0x7f.1/",  # 127.0.0.1 in hex shorthand
        "http://[::ffff:127.0.0.1]/",  # IPv4-mapped loopback
        "http://[::ffff:a00:1]/",  # IPv4-mapped 10.0.0.1
        "http://localhost/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",  # shared (carrier-grade NAT) space
        "http://[fe80::1]/",
        "http://[fc00::1]/",
    ],
)
async def test_private_addresses_are_refused_with_the_real_resolver(url: str) -> None:
    with pytest.raises(FetchRefused, match="KB_FETCH_ALLOW_HOSTS"):
        await fetch_page(url, _policy(timeout=2))


async def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    resolver = FakeResolver({"mixed.example": [["93.184.215.14", "10.1.2.3"]]})
    with pytest.raises(FetchRefused, match="private or loopback"):
        await fetch_page("http://mixed.example/", _policy(), resolver=resolver)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700::1111", True),
        ("::ffff:8.8.8.8", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("224.0.0.1", False),
        ("224.0.1.1", False),  # globally scoped multicast is still not a web server
        ("240.0.0.1", False),
        ("0.0.0.0", False),
        ("255.255.255.255", False),
        ("::", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("fec0::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),
        ("2002:7f00:1::", False),  # 6to4 wrapping 127.0.0.1
        ("2002:a00:1::", False),  # 6to4 wrapping 10.0.0.1
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", False),  # Teredo with client 10.0.0.1
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of 169.254.169.254
    ],
)
def test_is_public_address(address: str, public: bool) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is public


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.org/file.pdf", "only http:// and https://"),
        ("file:///etc/passwd", "only http:// and https://"),
        ("gopher://example.org/", "only http:// and https://"),
        ("example.org/page", "only http:// and https://"),
        ("http://user:secret@example.org/", "user name or password"),
        ("http://example.org/" + "a" * 2000, "at most 2000"),
        ("http:///nohost", "no host"),
    ],
)
async def test_malformed_or_forbidden_urls_are_refused_before_any_lookup(url: str, words: str) -> None:
    resolver = FakeResolver({"example.org": [["93.184.215.14"]]})
    with pytest.raises(FetchRefused, match=words) as refused:
        await fetch_page(url, _policy(), resolver=resolver)
    assert resolver.calls == []
    assert "secret" not in str(refused.value)


# --- redirects --------------------------------------------------------------------------------


async def test_redirect_chain_of_five_is_followed(site: LocalSite) -> None:
    page = await fetch_page(site.url(f"/redirect/{MAX_REDIRECTS}"), _policy("127.0.0.1"))
    assert page.url == site.url("/page")
    assert page.data == PAGE


async def test_redirect_chain_of_six_is_refused(site: LocalSite) -> None:
    with pytest.raises(FetchRefused, match=f"redirects more than {MAX_REDIRECTS} times"):
        await fetch_page(site.url(f"/redirect/{MAX_REDIRECTS + 1}"), _policy("127.0.0.1"))


async def test_redirect_loop_is_capped(site: LocalSite) -> None:
    before = site.served.hosts.count(f"127.0.0.1:{site.port}")
    with pytest.raises(FetchRefused, match="redirects more than"):
        await fetch_page(site.url("/loop"), _policy("127.0.0.1"))
    assert site.served.hosts.count(f"127.0.0.1:{site.port}") - before == MAX_REDIRECTS + 1


async def test_redirect_into_a_private_address_that_is_not_allowed_is_refused(site: LocalSite) -> None:
    """Only the first host is allowed; the hop to the metadata address is checked like the first."""
    with pytest.raises(FetchRefused) as refused:
        await fetch_page(site.url("/to-metadata"), _policy("127.0.0.1", timeout=2))
    assert "169.254.169.254" in str(refused.value)  # the URL the redirect named, not a resolver answer
    assert "KB_FETCH_ALLOW_HOSTS" in str(refused.value)


async def test_redirect_to_another_scheme_is_refused(site: LocalSite) -> None:
    with pytest.raises(FetchRefused, match="only http:// and https://"):
        await fetch_page(site.url("/to-ftp"), _policy("127.0.0.1"))


# --- pinning: the connection goes to the address that was checked -----------------------------


async def test_connection_goes_to_the_checked_address_with_the_original_host_header(site: LocalSite) -> None:
    """The name exists only in the fake resolver, which answers 127.0.0.1 once and then a
    rebinding answer. Success proves the socket went to the checked address (a second lookup —
    ours or the system's — would have failed or gone elsewhere), and the server saw the name."""
    resolver = FakeResolver({"pinned.example": [["127.0.0.1"], ["10.9.9.9"]]})
    page = await fetch_page(site.url("/echo-host", "pinned.example"), _policy("127.0.0.1"), resolver=resolver)
    assert resolver.calls == ["pinned.example"]
    assert page.data == f"pinned.example:{site.port}".encode()
    assert page.url == site.url("/echo-host", "pinned.example")


async def test_next_address_is_tried_when_the_first_refuses(site: LocalSite) -> None:
    """A name with two checked addresses where only the second listens (IPv6/IPv4 dual stack)."""
    resolver = FakeResolver({"dual.example": [["127.0.0.2", "127.0.0.1"]]})
    try:
        page = await fetch_page(site.url("/page", "dual.example"), _policy("127.0.0.0/8"), resolver=resolver)
    except FetchFailed:  # pragma: no cover - a host where 127.0.0.2 is not routable at all
        pytest.skip("127.0.0.2 is not usable here")
    assert page.data == PAGE


async def test_pinned_https_request_carries_host_and_sni() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"Content-Type": "text/html"}, content=PAGE)

    resolver = FakeResolver({"docs.example.com": [["93.184.215.14"]]})
    page = await fetch_page(
        "https://docs.example.com/guide/intro.html?x=1",
        _policy(),
        resolver=resolver,
        transport=httpx.MockTransport(handler),
    )
    (request,) = seen
    assert request.url.host == "93.184.215.14"
    assert request.url.raw_path == b"/guide/intro.html?x=1"
    assert request.headers["host"] == "docs.example.com"
    assert request.extensions["sni_hostname"] == "docs.example.com"
    assert page.url == "https://docs.example.com/guide/intro.html?x=1"
    assert page.filename == "intro.html"


def _tls_files(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``name`` (and its key), made with ``cryptography``."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


async def test_real_tls_to_a_pinned_address_verifies_the_certificate_for_the_name(tmp_path: Path) -> None:
    """A TLS server on 127.0.0.1 with a certificate for secure.example: the fetch connects to the
    IP yet sends SNI secure.example and verifies the certificate against it; a name the
    certificate does not cover fails verification."""
    cert_file, key_file = _tls_files(tmp_path, "secure.example")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(cert_file, key_file)
    sni_seen: list[str | None] = []

    def remember_sni(_sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, _ctx: ssl.SSLContext) -> None:
        sni_seen.append(name)

    server_ctx.sni_callback = remember_sni
    server = _Server(("127.0.0.1", 0), _Handler)
    server.served = Served()
    server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    client_ctx = ssl.create_default_context(cafile=str(cert_file))
    resolver = FakeResolver({"secure.example": [["127.0.0.1"]], "wrong.example": [["127.0.0.1"]]})
    try:
        page = await fetch_page(
            f"https://secure.example:{port}/echo-host",
            _policy("127.0.0.1"),
            resolver=resolver,
            transport=httpx.AsyncHTTPTransport(verify=client_ctx),
        )
        assert page.data == f"secure.example:{port}".encode()
        assert sni_seen == ["secure.example"]
        with pytest.raises(FetchFailed, match=re.escape("TLS certificate of wrong.example could not be verified")):
            await fetch_page(
                f"https://wrong.example:{port}/echo-host",
                _policy("127.0.0.1"),
                resolver=resolver,
                transport=httpx.AsyncHTTPTransport(verify=client_ctx),
            )
    finally:
        server.shutdown()
        server.server_close()


# --- failures the operator must understand ----------------------------------------------------


async def test_not_found_names_the_status(site: LocalSite) -> None:
    with pytest.raises(FetchFailed) as failed:
        await fetch_page(site.url("/missing"), _policy("127.0.0.1"))
    assert str(failed.value) == f"the page at {site.url('/missing')} answered 404 Not Found"


async def test_server_error_names_the_status(site: LocalSite) -> None:
    with pytest.raises(FetchFailed, match="answered 503 Service Unavailable"):
        await fetch_page(site.url("/broken"), _policy("127.0.0.1"))


async def test_slow_page_times_out(site: LocalSite) -> None:
    started = time.monotonic()
    with pytest.raises(FetchFailed) as failed:
        await fetch_page(site.url("/slow"), _policy("127.0.0.1", timeout=0.5))
    assert str(failed.value) == f"the page at {site.url('/slow')} did not answer within 0.5 s"
    assert time.monotonic() - started < 2


async def test_trickling_page_times_out_as_a_whole(site: LocalSite) -> None:
    """Each byte arrives well within the timeout; the deadline covers the whole fetch."""
    started = time.monotonic()
    with pytest.raises(FetchFailed, match=re.escape("did not answer within 0.5 s")):
        await fetch_page(site.url("/trickle"), _policy("127.0.0.1", timeout=0.5))
    assert time.monotonic() - started < 2


async def test_huge_body_is_refused_while_streaming(site: LocalSite) -> None:
    with pytest.raises(FetchRefused, match="larger than the 1 MiB limit"):
        await fetch_page(site.url("/huge"), _policy("127.0.0.1"))
    await asyncio.sleep(0.2)  # let the server thread notice the closed connection
    assert site.served.huge_sent < HUGE_TOTAL // 4, "the reader must stop, not drain the body"


async def test_body_over_a_small_limit_is_refused() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/plain"}, content=b"x" * 101)

    resolver = FakeResolver({"example.com": [["93.184.215.14"]]})
    transport = httpx.MockTransport(handler)
    with pytest.raises(FetchRefused, match="larger than the 100 bytes limit"):
        await fetch_page("http://example.com/", _policy(max_bytes=100), resolver=resolver, transport=transport)
    page = await fetch_page("http://example.com/", _policy(max_bytes=101), resolver=resolver, transport=transport)
    assert len(page.data) == 101


async def test_declared_length_over_the_limit_is_refused_without_reading() -> None:
    class NeverRead(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            raise AssertionError("the body must not be read")
            yield b""

    def handler(request: httpx.Request) -> httpx.Response:
        headers = {"Content-Type": "application/pdf", "Content-Length": str(10**9)}
        return httpx.Response(200, headers=headers, stream=NeverRead())

    resolver = FakeResolver({"example.com": [["93.184.215.14"]]})
    with pytest.raises(FetchRefused, match="larger than the 1 MiB limit"):
        await fetch_page(
            "http://example.com/big.pdf", _policy(), resolver=resolver, transport=httpx.MockTransport(handler)
        )


async def test_unsupported_content_type_is_named(site: LocalSite) -> None:
    with pytest.raises(FetchRefused, match="is image/png; only web pages"):
        await fetch_page(site.url("/image.png"), _policy("127.0.0.1"))


async def test_generic_binary_type_takes_the_document_suffix_from_the_url(site: LocalSite) -> None:
    page = await fetch_page(site.url("/files/report.pdf"), _policy("127.0.0.1"))
    assert page.filename == "report.pdf"
    assert page.data.startswith(b"%PDF")


async def test_connection_refused_is_said_plainly() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchFailed) as failed:
        await fetch_page(f"http://127.0.0.1:{port}/", _policy("127.0.0.1"))
    assert (
        str(failed.value)
        == f"the page at http://127.0.0.1:{port}/ could not be reached: 127.0.0.1 refused the connection"
    )


async def test_unknown_host_is_said_plainly() -> None:
    with pytest.raises(
        FetchFailed, match=re.escape("the host nowhere.example in http://nowhere.example/ was not found")
    ):
        await fetch_page("http://nowhere.example/", _policy(), resolver=FakeResolver({}))


# --- names and settings -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "suffix", "name"),
    [
        ("https://example.com/", ".html", "example.com.html"),
        ("https://example.com/docs/guide.html", ".html", "guide.html"),
        ("https://example.com/docs/guide.php?id=3", ".html", "guide.html"),
        ("https://example.com/a/b/", ".html", "b.html"),
        ("https://example.com/files/Report%202024.pdf", ".pdf", "Report-2024.pdf"),
        ("https://example.com/v1.2", ".html", "v1.2.html"),
        ("https://example.com/%2e%2e%2f%2e%2e%2fetc%2fpasswd", ".txt", "passwd.txt"),
        ("https://example.com/%E4%BB%B7%E6%A0%BC%E8%A1%A8.xlsx", ".xlsx", "价格表.xlsx"),
        ("https://example.com/..", ".html", "example.com.html"),
    ],
)
def test_safe_filename(url: str, suffix: str, name: str) -> None:
    assert safe_filename(httpx.URL(url), suffix) == name


def test_policy_from_settings() -> None:
    settings = Settings.from_env(
        {"KB_FETCH_ALLOW_HOSTS": " wiki.intra , 10.0.0.0/8,, ", "KB_FETCH_TIMEOUT": "5", "KB_UPLOAD_MAX_MB": "2"}
    )
    policy = FetchPolicy.from_settings(settings)
    assert policy == FetchPolicy(timeout=5.0, max_bytes=2 * 1024 * 1024, allow=("wiki.intra", "10.0.0.0/8"))


def test_malformed_network_in_the_allow_list_fails_at_once() -> None:
    with pytest.raises(ValueError, match="KB_FETCH_ALLOW_HOSTS"):
        FetchPolicy(timeout=1, max_bytes=1, allow=("10.0.0.0/33",))


def test_every_accepted_content_type_maps_to_a_suffix_the_parsers_take() -> None:
    """The suffix chosen here routes the fetched bytes to a parser; it must be one they take."""
    assert set(CONTENT_SUFFIXES.values()) <= set(SUPPORTED_SUFFIXES)
