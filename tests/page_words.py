"""What tells the two languages apart in what a page shows: a CJK character (ideographs and
CJK or full-width punctuation) is Chinese; a Latin-letter word in Chinese text is English
unless it is a ``{hole}``, a tag, an identifier or one of the catalogue's allowed names."""

from __future__ import annotations

import re

from gateway.words.catalogue import ALLOWED_NAMES

CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
HOLE = re.compile(r"\{(\w+)\}")
_TAG = re.compile(r"</?\w+>")
# A run of letters glued to a digit before it ("91dbafac") is the tail of an identifier, not a word.
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_.\-])[A-Za-z][A-Za-z0-9_.\-]*")
_IDENTIFIER = re.compile(r"[_.\-0-9]")
_ALLOWED = {name.lower() for name in ALLOWED_NAMES}


def english_words(chinese: str) -> list[str]:
    """The Latin-letter words of a Chinese text that are neither holes, tags, identifiers (with
    ``_``, ``.``, ``-`` or a digit) nor allowed names."""
    text = _TAG.sub(" ", HOLE.sub(" ", chinese))
    return [word for word in _LATIN_WORD.findall(text) if not _IDENTIFIER.search(word) and word.lower() not in _ALLOWED]
