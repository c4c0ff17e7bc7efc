"""What identifies an upload's content: a digest of its source type and its bytes.

A document keeps the digest of the original it serves, so re-uploading the very same file (or a
web sync fetching the same bytes) queues nothing. Computed where the bytes are read anyway (the
check of a spooled file reads it whole in its child process), piece by piece elsewhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def source_digest(source_type: str, pieces: Iterable[bytes]) -> str:
    """The hex SHA-256 of ``source_type``, a separator, and the bytes ``pieces`` give in order."""
    digest = hashlib.sha256(source_type.encode() + b"\x1f")
    for piece in pieces:
        digest.update(piece)
    return digest.hexdigest()
