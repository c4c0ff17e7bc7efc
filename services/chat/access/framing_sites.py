"""The sites a share link's page may be shown on, in a frame (MaxKB's per-link ``white_list``).

The gateway puts them into the page's ``Content-Security-Policy: frame-ancestors``, which the
browser enforces: a site not listed gets an empty frame, whatever its own page does. A list is
therefore checked entry by entry before it is stored: each entry is an origin
(``https://www.example.com``, ``http://127.0.0.1:8080``) or a host the browser matches with the
page's own scheme (``example.com``, ``*.example.com``), never a path, a quoted keyword or
anything that could end the directive and start another (a ``;`` or a space). Entries are kept
lower-case, without a trailing slash, each once, in the order given.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from kbcore.errors import InvalidRequest
from kbcore.words.said import said

MAX_SITES = 50
MAX_SITE_LENGTH = 260
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_SITE = re.compile(
    rf"^(?:(?P<scheme>https?)://)?(?P<host>(?:\*\.)?{_LABEL}(?:\.{_LABEL})*)(?::(?P<port>[0-9]{{1,5}}))?/?$"
)


def framing_sites(entries: Iterable[str]) -> tuple[str, ...]:
    """The checked, normalised list; InvalidRequest naming the first entry that is not a site."""
    sites: list[str] = []
    for entry in entries:
        site = _site(entry)
        if site not in sites:
            sites.append(site)
    if len(sites) > MAX_SITES:
        raise InvalidRequest(said("most_sites_can_be_allowed_not", max_sites=MAX_SITES, len_sites=len(sites)))
    return tuple(sites)


def _site(entry: str) -> str:
    text = entry.strip().lower()
    shown = entry[:80]
    found = _SITE.match(text) if len(text) <= MAX_SITE_LENGTH else None
    if found is None or (found["port"] is not None and not 0 < int(found["port"]) <= 65535):
        raise InvalidRequest(said("not_site_give_origin_such_https", shown=f"{shown!r}"))
    return text.rstrip("/")


def stored_sites(sites: Iterable[str]) -> str:
    """The list as the table keeps it: one site per line."""
    return "\n".join(sites)


def read_sites(stored: str) -> list[str]:
    return [line for line in stored.splitlines() if line]
