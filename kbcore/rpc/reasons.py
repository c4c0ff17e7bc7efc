"""Why a call was refused, where its status code alone cannot say: one trailing metadata entry.

RESOURCE_EXHAUSTED covers both a quota used up (HTTP 429) and a full disk (HTTP 507), and gRPC
has no code of its own for the second. The services add the reason when they end a call
(``kbcore.rpc.error_mapping.abort_for``) and the gateway reads it back (``gateway.errors.from_grpc``).
Apart from ``kbcore.rpc.error_mapping`` because the gateway, which holds no database code, imports
it (through ``kbcore.error_catalogue``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

REASON_KEY = "kb-refusal"
STORAGE_FULL = "storage-full"


def reason_in(metadata: Iterable[tuple[str, Any]] | None) -> str:
    """The reason a call's trailing metadata carries; "" when it carries none."""
    for key, value in metadata or ():
        if key == REASON_KEY:
            return value.decode() if isinstance(value, bytes) else str(value)
    return ""
