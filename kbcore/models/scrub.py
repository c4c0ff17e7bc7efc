"""Model endpoints' error messages, made safe to show: providers echo parts of the request
(OpenAI's 401 shows the start of the key), and an operator or a log must never see a key."""

from __future__ import annotations

MESSAGE_LIMIT = 300  # characters of an endpoint's message worth showing


def shown(message: str, secret: str | None) -> str:
    """The message without the API key, cut to a readable length."""
    if secret:
        message = message.replace(secret, "***")
    return message[:MESSAGE_LIMIT]
