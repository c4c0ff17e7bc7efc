"""Where the gateway is: on this machine (what a local client connects to), and for people (what
a sign-in link a tool prints points at).

The gateway's own settings say where it listens (``KB_HTTP_HOST``/``KB_HTTP_PORT``); a process
that prints a link for a person (``tools.signin_link``, ``make run``'s banner) may run where those
are not what people open: in another container than the gateway's, behind a reverse proxy, on a
published port. ``KB_PUBLIC_URL`` says what they open; without it the listening address is the
best guess.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from kbcore.settings import Settings, SettingsError

EVERYWHERE = frozenset({"0.0.0.0", "::", ""})  # a listen-on-everything address is not one to connect to


def local_url(settings: Settings, port: int | None = None) -> str:
    """``http://host:port`` of the gateway on this machine: ``KB_HTTP_HOST`` (loopback for one
    that listens everywhere, an IPv6 address in brackets) and ``port`` (the one it bound; default
    ``KB_HTTP_PORT``)."""
    host = settings.http_host.strip()
    if host in EVERYWHERE:
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host.strip('[]')}]"
    return f"http://{host}:{settings.http_port if port is None else port}"


def public_url(settings: Settings, local: str | None = None) -> str:
    """The address people open: ``KB_PUBLIC_URL`` (checked, without a trailing ``/``), else
    ``local`` (where the gateway was found listening), else ``local_url``."""
    configured = settings.public_url.strip()
    if not configured:
        return local or local_url(settings)
    try:
        parts = urlsplit(configured)
        parts.port  # noqa: B018 - read for its check: a port that is not a number raises
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and not (parts.query or parts.fragment)
    except ValueError:  # an unclosed [ or a port that is not a number
        usable = False
    if not usable:
        raise SettingsError(
            f"KB_PUBLIC_URL={configured!r} is not an http:// or https:// address such as https://kb.example.com"
            " (a host, an optional port and path; no query or fragment)"
        )
    return configured.rstrip("/")
