"""API keys of registered model endpoints, encrypted at rest (Fernet: AES-128-CBC + HMAC).

The key comes from ``KB_SECRET_KEY`` (any long random string; a Fernet key is derived from it
with SHA-256), else from ``<data_dir>/secret.key``, created privately by the first process that
asks, as the local operator token is: the chat, context and retrieval processes share the
database and the environment (or the data folder), so each can decrypt what the chat service
stored. Losing that key makes the stored API keys unreadable: the models must then be given
their keys again (a check says so), nothing else is lost.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from kbcore.errors import CorruptData
from kbcore.rpc.local_secret import shared_secret
from kbcore.settings import Settings
from kbcore.words.said import said

LOCAL_KEY_FILE = "secret.key"
HINT_CHARS = 4


class SecretBox:
    def __init__(self, secret: str) -> None:
        digest = hashlib.sha256(secret.encode()).digest()
        self._fernet = Fernet(base64.urlsafe_b64encode(digest))

    @classmethod
    def from_settings(cls, settings: Settings) -> SecretBox:
        if settings.secret_key:
            return cls(settings.secret_key)
        return cls(shared_secret(settings.data_dir / LOCAL_KEY_FILE, lambda: Fernet.generate_key().decode()))

    def seal(self, plain: str) -> str:
        return self._fernet.encrypt(plain.encode()).decode() if plain else ""

    def open(self, sealed: str) -> str:
        """The plain key; a key sealed under another secret is refused in words."""
        if not sealed:
            return ""
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise CorruptData(said("stored_api_key_cannot_be_decrypted")) from None


def key_hint(plain: str) -> str:
    """What a list shows of a key: its last characters after an ellipsis ("" when there is none)."""
    return f"…{plain[-HINT_CHARS:]}" if plain else ""
