"""Failures stored as finished English sentences, before records kept words by code: recognised
once, by the migration that converts them (``versions/0016_words_by_code.py``), and never again.

``legacy_words.json`` is the catalogue as it stood then, frozen, with the few sentences the code
stored without an entry (a record stopped by its user, a dataset's failed change of model): each
English template (holes named as the code of that time named them) with the code its message has
now and the names its holes have now, in order. A sentence is matched against the templates with the most literal text
first; a value that is itself such a sentence (a backend's words after the gateway's lead, words
before an error id) is recognised too, as words within words. Nothing else in the product reads
a sentence to learn what it says.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from kbcore.words.said import Said

_HOLE = re.compile(r"\{([^{}]*)\}")
NESTING = 3  # words within words within words: as deep as sentences were ever put together


@dataclass(frozen=True)
class _Template:
    code: str
    names: tuple[str, ...]  # the holes' names now, in the order the template has them
    regex: re.Pattern[str]
    literal_length: int


@cache
def _templates() -> tuple[_Template, ...]:
    table = json.loads((Path(__file__).parent / "legacy_words.json").read_text(encoding="utf-8"))
    found = []
    for template, (code, names) in table.items():
        parts = _HOLE.split(template)  # literal, hole, literal, …
        regex = "".join(re.escape(part) if i % 2 == 0 else "(.*?)" for i, part in enumerate(parts))
        found.append(_Template(code, tuple(names), re.compile(regex, re.DOTALL), sum(map(len, parts[::2]))))
    return tuple(sorted(found, key=lambda template: -template.literal_length))


def legacy_words(sentence: str, depth: int = 0) -> Said | None:
    """The words a stored English sentence said; None when it is no catalogued sentence."""
    for template in _templates():
        matched = template.regex.fullmatch(sentence)
        if matched is None:
            continue
        values: dict[str, str | Said] = {}
        for name, value in zip(template.names, matched.groups(), strict=True):
            inner = legacy_words(value, depth + 1) if depth < NESTING else None
            values[name] = inner or value
        return Said(template.code, values)
    return None
