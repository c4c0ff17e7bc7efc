"""Why a call was refused, where its status code alone cannot say: one trailing metadata entry;
and, for a refusal that knows it, when to try again: another.

RESOURCE_EXHAUSTED covers a quota used up (HTTP 429), a full disk (HTTP 507) and a budget the
deployment shares taken for now (HTTP 503), and gRPC has no code of its own for the last two. The services add the reason when they end a call
(``kbcore.rpc.error_mapping.abort_for``) and the gateway reads it back (``gateway.errors.from_grpc``).
A throttled sign-in knows how long the caller must wait (``RateLimited.retry_after``): the
seconds travel as ``RETRY_AFTER_KEY`` and the gateway's 429 says them in ``Retry-After``.
Apart from ``kbcore.rpc.error_mapping``, beside the catalogue that names its reasons
(``kbcore.refusals.error_catalogue``), because the gateway, which holds no database code, reads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

REASON_KEY = "kb-refusal"
STORAGE_FULL = "storage-full"
BUSY = "busy"  # a budget the deployment shares is taken for now: HTTP 503, try again soon
RETRY_AFTER_KEY = "kb-retry-after"


def reason_in(metadata: Iterable[tuple[str, Any]] | None) -> str:
    """The reason a call's trailing metadata carries; "" when it carries none."""
    for key, value in metadata or ():
        if key == REASON_KEY:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""


def retry_after_in(metadata: Iterable[tuple[str, Any]] | None) -> int | None:
    """The seconds to wait a call's trailing metadata carries; None when it carries none (or
    something that is not a whole number of seconds)."""
    for key, value in metadata or ():
        if key == RETRY_AFTER_KEY:
            text = value.decode() if isinstance(value, bytes) else str(value)
            return int(text) if text.isascii() and text.isdigit() else None
    return None
