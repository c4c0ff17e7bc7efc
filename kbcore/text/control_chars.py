"""Control characters in text a person typed: the C0 set, DEL and the C1 set (Unicode's ``Cc``).

None of them is text a reader sees: a bell, an escape that starts a terminal sequence, a C1 code
some terminals and viewers act on, the separators ``str.strip`` and ``str.splitlines`` treat as
spaces and line ends. Fields that hold a line of text (a chat's name) refuse them all; a question
keeps the three a typed paragraph has (tab, line feed, carriage return). One test of the
characters for every field, so no field draws the line elsewhere.
"""

from __future__ import annotations

import unicodedata

LINE_BREAKS_AND_TABS = frozenset("\t\n\r")


def first_control(text: str, allowed: frozenset[str] = frozenset()) -> str | None:
    """The first control character in ``text`` that is not ``allowed``; None when there is none."""
    for ch in text:
        if ch not in allowed and unicodedata.category(ch) == "Cc":
            return ch
    return None


def code_point(ch: str) -> str:
    """A character as a reader can name it whatever it does on a screen: ``U+001B``."""
    return f"U+{ord(ch):04X}"
