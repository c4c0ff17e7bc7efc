"""A refusal in the caller's language.

The services refuse in English sentences (their logs and their gRPC callers read those); the
gateway shows a person the sentence in the language they read. A Chinese reader gets the
catalogue's Chinese for the sentence's template (``refusal_words``) with the sentence's values
put in; a value that is itself a catalogued sentence (a backend's words after the gateway's
lead) is put in translated. A sentence the catalogue lacks is never shown half translated: the
reader gets the catalogue's general words for the refusal's status instead, and the operator's
log keeps the English.
"""

from __future__ import annotations

import logging
from functools import cache

from kbcore.refusals.error_catalogue import words_for_http_status
from kbcore.words.language import Language
from kbcore.words.placeholders import Pattern
from kbcore.words.refusal_words import CHINESE

log = logging.getLogger(__name__)


@cache
def _patterns() -> tuple[Pattern, ...]:
    """Every catalogued template with holes, the most specific (most literal text) first."""
    with_holes = [Pattern.of(template) for template in CHINESE if "{" in template]
    return tuple(sorted(with_holes, key=lambda pattern: -pattern.literal_length))


NESTING = 3  # a failure's words after a lead after a lead: as deep as the gateway ever puts them


def _chinese(sentence: str, depth: int = 0) -> str | None:
    """The catalogue's Chinese for a finished English sentence; None if it has none."""
    if (exact := CHINESE.get(sentence)) is not None:
        return exact
    for pattern in _patterns():
        values = pattern.values(sentence)
        if values is not None:
            if depth < NESTING:
                values = {name: _chinese(value, depth + 1) or value for name, value in values.items()}
            return CHINESE[pattern.template].format_map(values)
    return None


def refusal_in(language: Language, sentence: str, http_status: int) -> str:
    """What a reader of ``language`` is shown for a refusal said in ``sentence`` (English) with
    ``http_status``: the sentence itself in English, its catalogued Chinese, or the status's
    general words when the catalogue has no Chinese for it."""
    if language == "en":
        return sentence
    if (shown := _chinese(sentence)) is not None:
        return shown
    log.info("no Chinese words for a refusal; shown the general words for %d instead: %s", http_status, sentence)
    general = words_for_http_status(http_status)
    return _chinese(general) or general
