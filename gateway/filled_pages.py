"""The chat page, the operator page and the embed script with their words written in, so a page arrives whole in
its reader's language: no script fills text after the page shows (no flash of the other
language), and the content security policy stays ``script-src 'self'`` with no inline script.

``chat.html`` and ``admin.html`` name each word by its path in the catalogue (``{{chat_page.send}}``) and the
page's own values under ``page.`` (its language, and the link to the other one); every value is
HTML-escaped. The embed script runs in another site's page, where the gateway cannot choose a
language, so it gets both languages' words and chooses there.

It reads the words as ``gateway.labels`` puts them together, so it sits beside it rather than in
``gateway.words``, which the labels read and which reads nothing of them."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from gateway.labels import labels_json
from gateway.words.catalogue import LANGUAGE_NAMES
from kbcore.words.language import LANGUAGES, Language

STATIC = Path(__file__).resolve().parent / "static"
_PLACEHOLDER = re.compile(r"\{\{([\w.]+)\}\}")
# The language tag a page declares (``<html lang>``): what screen readers and fonts go by.
HTML_LANG: Mapping[Language, str] = {"zh": "zh-CN", "en": "en"}
# Where the embed script's words go: a literal that reads as "no words" in the file itself.
EMBED_WORDS_MARK = "/*{{words}}*/ null"


def _static_text(name: str) -> str:
    """A file of the pages, read as it is now (no build step: an edit shows on the next load)."""
    return (STATIC / name).read_text(encoding="utf-8")


def _word(tree: Mapping[str, Any], path: str) -> str:
    found: Any = tree
    for key in path.split("."):
        found = found[key]
    if not isinstance(found, str):
        raise KeyError(f"{path} names no single word")
    return found


def other_language(language: Language) -> Language:
    return next(other for other in LANGUAGES if other != language)


def switch_href(language: Language, query: Mapping[str, str]) -> str:
    """The page itself in the other language: its query kept (``embed=…`` inside a frame), its
    ``lang`` replaced."""
    return "?" + urlencode({**{k: v for k, v in query.items() if k != "lang"}, "lang": other_language(language)})


def _filled_page(name: str, language: Language, query: Mapping[str, str]) -> str:
    """A page of ``gateway/static`` in ``language``, with its link to the same page in the other
    language."""
    other = other_language(language)
    page = {
        "lang": HTML_LANG[language],
        "switch_href": switch_href(language, query),
        "switch_lang": HTML_LANG[other],
        "switch_name": LANGUAGE_NAMES[other],
    }
    tree = {**labels_json(language), "page": page}
    return _PLACEHOLDER.sub(lambda match: html.escape(_word(tree, match.group(1))), _static_text(name))


def chat_page(language: Language, query: Mapping[str, str]) -> str:
    """chat.html in ``language``, with its link to the same page in the other language."""
    return _filled_page("chat.html", language, query)


def admin_page(language: Language, query: Mapping[str, str]) -> str:
    """admin.html, the operator page, in ``language``, with its link to the other language."""
    return _filled_page("admin.html", language, query)


def embed_script() -> str:
    """embed.js with the bubble's words in both languages (its default name is the chat page's)."""
    words = {}
    for language in LANGUAGES:
        tree = labels_json(language)
        words[language] = {"title": tree["chat_page"]["title"], **tree["embed"]}
    return _static_text("embed.js").replace(EMBED_WORDS_MARK, json.dumps(words, sort_keys=True))
