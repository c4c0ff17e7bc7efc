"""How every secret the chat service hands out is kept: only its SHA-256, so a database leak
hands out no working credential. API keys and visitor tokens (``services.chat.access``) and a
user's sessions, personal tokens and sign-in links (``services.chat.accounts``) are all looked
up by this digest, so it is one function both use."""

from __future__ import annotations

import hashlib


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
