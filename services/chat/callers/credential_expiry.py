"""When a handed-out credential stops working, as a request asks for it: an API key or share
link (``services.chat.access``) and a personal token (``services.chat.accounts``) take their
expiry in the same words and are refused alike when it is no time a person would mean."""

from __future__ import annotations

import datetime as dt

from kbcore.db.tables import utcnow
from kbcore.errors import InvalidRequest

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
        raise InvalidRequest(f"expires_at must be an RFC 3339 time such as 2027-01-31T00:00:00Z, got {shown!r}")
    if when.tzinfo is None:
        raise InvalidRequest(f"expires_at needs a time zone (Z or an offset such as +08:00), got {shown!r}")
    when = when.astimezone(dt.UTC).replace(tzinfo=None)
    now = now or utcnow()
    if when <= now:
        raise InvalidRequest(f"expires_at must be in the future, got {shown!r}")
    if when > now + MAX_EXPIRY:
        raise InvalidRequest(f"expires_at must be within ten years from now, got {shown!r}")
    return when
