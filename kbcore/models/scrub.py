"""Model endpoints' error messages, made safe to keep: providers echo parts of the request
(OpenAI's 401 shows the start and end of the key, "sk-abc***wxyz"), and a log or an operator
must never see a key, whole or in part.

The key we sent is replaced wherever it appears; so is anything shaped like a key whichever
key it is (an endpoint may echo another one, or mask ours in its own way): ``sk-``-style keys,
masked keys, ``Bearer`` values, ``key=`` query values and long opaque tokens. Overreach is
harmless here: these messages are for reading, never for parsing.
"""

from __future__ import annotations

import re

MESSAGE_LIMIT = 300  # characters of an endpoint's message worth showing
MASK = "***"

_BEARER = re.compile(r"(?i)\bbearer\s+\S+")
_KEY_PARAMETER = re.compile(r"(?i)\b((?:api[_-]?)?key|token|access_token|secret)=[^&\s\"']+")
_KEY_LIKE = re.compile(
    r"""
    \b(?:sk|pk|rk)[-_][\w\-*.]{2,}              # OpenAI, DeepSeek, Anthropic, Stripe-style keys
    | [\w\-]*\*{3,}[\w\-*.]*                     # a masked key: sk-abc***wxyz, abcd********wxyz
    | \b[\w\-]+(?:\.\.\.|…)[\w\-]+\b             # a key shortened with an ellipsis: sk-ab...wxyz
    | \b(?=[A-Za-z_\-]*\d)(?=[\d_\-]*[A-Za-z])[\w\-]{32,}\b   # a long opaque token of letters and digits
    """,
    re.VERBOSE,
)
_PREFIX_CHARS = 8  # the start of our key, found in a token, masks the token (a key's own shortening)
# Shorter "keys" (a placeholder such as "k" for an endpoint without authentication) are no
# secret, and replacing every "k" would make the message unreadable.
_SECRET_MIN = 4


def shown(message: str, secret: str | None) -> str:
    """The message without the API key (``secret``) or anything key-like, cut to a readable length."""
    if secret and len(secret) >= _SECRET_MIN:
        message = message.replace(secret, MASK)
        if len(secret) > _PREFIX_CHARS:
            message = re.sub(rf"\S*{re.escape(secret[:_PREFIX_CHARS])}\S*", MASK, message)
    message = _BEARER.sub(f"Bearer {MASK}", message)
    message = _KEY_PARAMETER.sub(rf"\1={MASK}", message)
    message = _KEY_LIKE.sub(MASK, message)
    return message[:MESSAGE_LIMIT]
