"""Message templates: a sentence with ``{name}`` holes, as the code writes it and as the
catalogue keys it.

The code writes its refusals as f-strings (``f"chat {chat_id} does not exist"``); the catalogue
keys the same sentence with each hole named after what fills it (``chat {chat_id} does not
exist``), so a test can read the code's sentences and find each in the catalogue, and the
gateway can recognise a finished sentence and put its values into the other language's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HOLE = re.compile(r"\{([^{}]*)\}")
_NOT_NAME = re.compile(r"\W+")


def hole_name(expression: str) -> str:
    """The name a hole is keyed by: its expression with everything but letters, digits and
    underscores squeezed to one underscore (``len(title)`` → ``len_title``); ``value`` when
    nothing is left (a positional ``{}``)."""
    name = _NOT_NAME.sub("_", expression.split("!")[0].split(":")[0] if "[" not in expression else expression)
    return name.strip("_").lower() or "value"


def keyed(template: str) -> str:
    """A template with each hole named (``{key_id[:64]}`` → ``{key_id_64}``); positional holes
    are numbered from the second on, so no two holes share a name."""
    seen: dict[str, int] = {}

    def name(match: re.Match[str]) -> str:
        base = hole_name(match.group(1))
        seen[base] = seen.get(base, 0) + 1
        return "{" + (base if seen[base] == 1 else f"{base}{seen[base]}") + "}"

    return _HOLE.sub(name, template)


@dataclass(frozen=True)
class Pattern:
    """One keyed template, ready to recognise a finished sentence made from it."""

    template: str
    regex: re.Pattern[str]
    literal_length: int  # more literal text: a more specific template, tried first

    @classmethod
    def of(cls, template: str) -> Pattern:
        parts = _HOLE.split(template)  # literal, name, literal, name, …, literal
        regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.*?)" for i, part in enumerate(parts))
        literal = sum(len(part) for part in parts[::2])
        return cls(template, re.compile(regex, re.DOTALL), literal)

    def values(self, sentence: str) -> dict[str, str] | None:
        """The holes' values if ``sentence`` is this template filled in, else None."""
        found = self.regex.fullmatch(sentence)
        return found.groupdict() if found else None
