"""A record id as callers send it (text on the wire, a BIGINT in SQL), checked once for every RPC
that names a record, so a hostile id is a clear INVALID_ARGUMENT and never an SQL overflow."""

from __future__ import annotations

from kbcore.errors import InvalidRequest
from kbcore.limits import MAX_RECORD_ID


def record_id(raw: str) -> int:
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 19 and 1 <= int(raw) <= MAX_RECORD_ID):
        raise InvalidRequest(f"record_id must be a number between 1 and {MAX_RECORD_ID}, got {raw[:40]!r}")
    return int(raw)
