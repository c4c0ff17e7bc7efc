"""Text every store and wire can hold: no NUL character and no lone UTF-16 surrogate.

PostgreSQL refuses a NUL inside ``text`` (SQLite keeps it silently), and protobuf cannot encode a
lone surrogate as UTF-8. Text that comes from outside the request path (a parsed file's cells, a
model's answer, a stored paragraph) is made storable here, once, the same way everywhere; text a
caller sends in a request is refused instead (the gRPC entry guard), so the caller learns of it.
"""

from __future__ import annotations

import re

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def has_unstorable(text: str) -> bool:
    """Whether ``text`` holds a character no store or wire of ours can hold."""
    return _UNSTORABLE.search(text) is not None


def storable_text(text: str) -> str:
    """``text`` without the characters no store or wire of ours can hold (dropped, not replaced:
    a NUL carries no meaning a reader could miss)."""
    return _UNSTORABLE.sub("", text) if has_unstorable(text) else text
