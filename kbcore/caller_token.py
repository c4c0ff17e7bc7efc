"""Who is calling travels as gRPC metadata (``authorization: Bearer <token>``), never inside a
request body, so a caller cannot claim to be someone else.

The operator's token is ``KB_ADMIN_TOKEN``. When none is configured (the embedded demo), the
processes that share the data folder share a random local operator token kept in
``<data_dir>/operator.token`` (mode 0600): the gateway presents it for loopback callers, and a
local ``grpcurl`` can read it from there.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable

from kbcore.settings import Settings

METADATA_KEY = "authorization"
LOCAL_TOKEN_FILE = "operator.token"


def operator_token(settings: Settings) -> str:
    """The configured operator token, or the local one (created by whichever process asks first)."""
    if settings.admin_token:
        return settings.admin_token
    path = settings.data_dir / LOCAL_TOKEN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # Written whole under a private name, then linked into place: a process starting at the
        # same moment sees either no file or the complete token, never an empty one, and the
        # first link wins (a second one fails and reads the winner's).
        draft = path.with_name(f".{LOCAL_TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(24))
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    return path.read_text().strip()


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """Call metadata that presents ``token``."""
    return ((METADATA_KEY, f"Bearer {token}"),)


def token_in(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The bearer token a call presents, or ""."""
    for key, value in metadata or ():
        if key == METADATA_KEY and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return ""
