"""What the gateway accepts at its edge, as pure functions of a request's headers: which
``Host`` names it answers, which ``Origin`` may change state, and which body types exist.

Why: with ``KB_DEV_LOOPBACK_OPERATOR`` on, any loopback caller is the operator, so a web page in
the developer's browser is a loopback caller too (and a visitor's page holds a visitor token). A page on another site can send a ``no-cors``
``text/plain`` POST (CSRF) or point its own name at 127.0.0.1 (DNS rebinding, a foreign
``Host``). Checking ``Host`` against the names this gateway is reached by, ``Origin`` on every
state-changing request, and the body's declared type closes both without a token. Requests with
no ``Origin`` (curl, SDKs, the CLI) are not browsers driven by a page and stay allowed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from kbcore.settings import Settings
from kbcore.words.said import Said, said

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::", "*"})
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ANY_HOST = "*"


def _names(csv: str) -> list[str]:
    return [part.strip().lower() for part in csv.split(",") if part.strip()]


def is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_name(host_header: str) -> str:
    """``Host`` without its port, lower-case; ``[::1]:8080`` → ``::1``."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


@dataclass(frozen=True)
class EdgeRules:
    """The names and origins one gateway accepts, fixed at start from its settings."""

    hosts: frozenset[str]
    any_host: bool
    cors_origins: frozenset[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> EdgeRules:
        configured = _names(settings.allowed_hosts)
        listen = settings.http_host.strip().lower().strip("[]")
        hosts = set(LOOPBACK_NAMES) | set(configured)
        if listen not in WILDCARD_HOSTS:
            hosts.add(listen)
        origins = frozenset(o.rstrip("/") for o in _names(settings.cors_origins))
        return cls(frozenset(hosts), ANY_HOST in configured, origins)

    def host_refusal(self, host_header: str | None) -> Said | None:
        """Why this ``Host`` is refused, or None. A request without one names nothing to check.
        An IP address is always accepted: rebinding needs a DNS name (the page's origin is the
        attacker's name), and a page whose origin is this address and port is this gateway's."""
        if host_header is None or self.any_host:
            return None
        name = host_name(host_header)
        if name in self.hosts or is_ip_address(name):
            return None
        return said("gateway_does_not_answer_host_add", host_header=f"{host_header!r}")

    def origin_refusal(self, method: str, origin: str | None, host_header: str | None) -> Said | None:
        """Why a state-changing request from this ``Origin`` is refused, or None. Same origin
        means the origin's host[:port] is the request's ``Host`` (already checked against the
        allowed names); ``KB_CORS_ORIGINS`` are trusted cross-origin callers."""
        if method not in STATE_CHANGING or origin is None:
            return None
        normalised = origin.strip().lower().rstrip("/")
        if normalised in self.cors_origins:
            return None
        netloc = urlsplit(normalised).netloc if "://" in normalised else ""
        if netloc and host_header is not None and netloc == host_header.strip().lower():
            return None
        return said("cross_origin_request_refused_page_may", origin=f"{origin!r}")


def media_type(content_type: str | None) -> str:
    return (content_type or "").partition(";")[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    kind = media_type(content_type)
    return kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json"))


def is_multipart(content_type: str | None) -> bool:
    return media_type(content_type) == "multipart/form-data"


def body_type_refusal(method: str, has_body: bool, content_type: str | None) -> Said | None:
    """Every body this API reads is JSON, except a document upload's multipart form (which the
    upload route alone accepts); anything else, or no declared type, is refused before parsing."""
    if method not in STATE_CHANGING or not has_body or is_json(content_type) or is_multipart(content_type):
        return None
    declared = media_type(content_type) or "none"
    return said("send_body_content_type_application_json_2", declared=declared)
