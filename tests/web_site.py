"""A local web site for web-import tests: pages served from a dict that a test changes as it
goes, with an ETag (a hash of the body) and a Last-Modified on every page, 304 Not Modified for
a request whose If-None-Match matches, 404 for a page set to None, and every request recorded."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVED_AT = format_datetime(dt.datetime(2026, 11, 30, 8, 0, tzinfo=dt.UTC), usegmt=True)


def page_html(number: int, revised: bool = False) -> str:
    rule = "逾期不办理的，视为放弃。" if revised else "逾期可以补办。"
    return (
        f"<html><head><meta charset='utf-8'><title>第{number}号通知</title></head><body><article>"
        f"<h1>第{number}号通知</h1><p>第{number}号通知的办理时间为工作日上午九点至十一点。</p>"
        f"<p>第{number}号通知的办理须知：{rule}</p></article></body></html>"
    )


@dataclasses.dataclass
class Site:
    """The pages the local server serves (path → HTML; None: 404) and every request it saw."""

    pages: dict[str, str | None]
    requests: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (path, If-None-Match)
    headers: dict[str, str] = dataclasses.field(default_factory=dict)  # sent with every page
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked = self.headers.get("If-None-Match", "")
            with site.lock:
                site.requests.append((self.path, asked))
                html = site.pages.get(self.path)
            if html is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = html.encode()
            etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
            if asked == etag:
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", SERVED_AT)
            for name, value in site.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Pages


@contextmanager
def serve_site(pages: dict[str, str | None], headers: dict[str, str] | None = None) -> Iterator[tuple[Site, str]]:
    """The site on 127.0.0.1 (port 0) in a thread of its own, and its base URL; ``headers`` go
    with every page served."""
    state = Site(pages, headers=headers or {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, name="test web site", daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
