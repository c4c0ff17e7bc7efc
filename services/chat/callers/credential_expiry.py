"""When a handed-out credential stops working, as a request asks for it: an API key or share
link (``services.chat.access``) and a personal token (``services.chat.accounts``) take their
expiry in the same words and are refused alike when it is no time a person would mean."""

from __future__ import annotations

import datetime as dt

from kbcore.db.tables import utcnow
from kbcore.errors import InvalidRequest
from kbcore.words.said import said

MAX_EXPIRY = dt.timedelta(days=3653)  # ten years: beyond that an expiry is a typo, not a plan
MAX_EXPIRY_TEXT = 64


def parse_expiry(raw: str, now: dt.datetime | None = None) -> dt.datetime | None:
    """An RFC 3339 time with a zone, in the future and within ten years, as naive UTC (how the
    database stores times); None for "" (never expires)."""
    text = raw.strip()
    if not text:
        return None
    shown = text[:MAX_EXPIRY_TEXT]
    try:
        when = dt.datetime.fromisoformat(text) if len(text) <= MAX_EXPIRY_TEXT else None
    except ValueError:
        when = None
    if when is None:
        raise InvalidRequest(said("expires_must_be_rfc_3339_time", shown=f"{shown!r}"))
    if when.tzinfo is None:
        raise InvalidRequest(said("expires_needs_time_zone_z_offset", shown=f"{shown!r}"))
    when = when.astimezone(dt.UTC).replace(tzinfo=None)
    now = now or utcnow()
    if when <= now:
        raise InvalidRequest(said("expires_must_be_future_got", shown=f"{shown!r}"))
    if when > now + MAX_EXPIRY:
        raise InvalidRequest(said("expires_must_be_within_ten_years", shown=f"{shown!r}"))
    return when
