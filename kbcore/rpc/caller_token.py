"""Who is calling travels as gRPC metadata (``authorization: Bearer <token>``), never inside a
request body, so a caller cannot claim to be someone else.

The operator's token is ``KB_ADMIN_TOKEN``. When none is configured (the embedded demo), the
processes that share the data folder share a random local operator token kept in
``<data_dir>/operator.token`` (mode 0600): the test harness, the bench and a local ``grpcurl``
read it from there, and the gateway presents it for loopback callers only when
``KB_DEV_LOOPBACK_OPERATOR`` asks (docs/access.md).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from kbcore.rpc.local_secret import shared_secret
from kbcore.settings import Settings

METADATA_KEY = "authorization"
LOCAL_TOKEN_FILE = "operator.token"


def operator_token(settings: Settings) -> str:
    """The configured operator token, or the local one (created by whichever process asks first)."""
    if settings.admin_token:
        return settings.admin_token
    return shared_secret(settings.data_dir / LOCAL_TOKEN_FILE, lambda: secrets.token_hex(24))


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
