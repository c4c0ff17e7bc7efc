"""The service credential: the secret every gRPC call between the knowledge-base's own processes
carries, so a port reached from the network serves nobody else.

It is ``KB_SERVICE_TOKEN``. When none is configured (the embedded demo: ``make run`` needs no
setup), the processes that share the data folder share a random one kept in
``<data_dir>/service.token`` (mode 0600), the same way they share the local operator token.
It travels in its own metadata key, not ``authorization``: the chat service reads the calling
person's bearer token there.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Iterable

from kbcore.rpc.local_secret import shared_secret
from kbcore.settings import Settings

METADATA_KEY = "kb-service-token"
LOCAL_TOKEN_FILE = "service.token"
# Metadata values of a text key travel as printable ASCII; anything else could not be sent.
_SENDABLE = frozenset(chr(code) for code in range(0x21, 0x7F))


def service_credential(settings: Settings) -> str:
    """The configured service credential, or the local one (created by whichever process asks
    first). A configured value that cannot travel as call metadata stops the process at start,
    not at its first call."""
    token = settings.service_token or shared_secret(settings.data_dir / LOCAL_TOKEN_FILE, lambda: secrets.token_hex(32))
    if not set(token) <= _SENDABLE:
        raise ValueError("KB_SERVICE_TOKEN must be printable ASCII without spaces (a long random string)")
    return token


def presents(metadata: Iterable[tuple[str, str | bytes]] | None, credential: str) -> bool:
    """Whether call ``metadata`` carries ``credential``, compared in constant time so the time a
    refusal takes tells nothing about how much of a guess was right."""
    expected = credential.encode()
    for key, value in metadata or ():
        if key == METADATA_KEY and isinstance(value, str):
            return hmac.compare_digest(value.encode(), expected)
    return False
