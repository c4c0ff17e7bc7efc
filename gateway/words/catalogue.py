"""How a word is kept: its Chinese and its English side by side as one pair, so that neither
language can gain or lose a word without the other, and a page served in one language can never
show a word of the other.

A ``Word`` is ``(Chinese, English)``; ``Words`` nests them by area and key, the same tree in both
languages. Templates name their holes ``{like_this}``, the same holes in both."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeAlias

from kbcore.words.language import Language

Word: TypeAlias = tuple[str, str]
Words: TypeAlias = Mapping[str, "Word | Words"]

# A language's own name for itself, for the link that switches to it: "English" on the Chinese
# page and "中文" on the English one, each marked as the other language (not a word to translate).
LANGUAGE_NAMES: Mapping[Language, str] = {"zh": "中文", "en": "English"}

# English a Chinese word may contain: names of formats, products and protocols, and key names,
# which Chinese writes as they are. Identifiers (anything with ``_``, ``.``, ``-`` or a digit,
# like ``KB_ADMIN_TOKEN`` or ``data-token``) and ``{holes}`` are names already.
ALLOWED_NAMES = frozenset(
    {
        *("Markdown", "PDF", "Word", "Excel", "xls", "PowerPoint", "CSV", "JSON", "HTML"),
        *("API", "Key", "Base", "URL", "ID", "id", "HTTP", "SSE", "OpenAI", "Bearer", "Authorization"),
        *("token", "RRF", "iframe", "Enter", "Shift", "https"),
        *("PNG", "JPEG", "GIF", "WebP", "SVG", "zip", "KB", "MiB", "UTC"),
        *("DeepSeek", "vLLM", "SGLang", "Ollama"),
        # Notations: a colour's "#rrggbb", and "\n" for a line break in the separators' hint.
        *("rrggbb", "n"),
    }
)


def word_in(word: Word, language: Language) -> str:
    """One word in ``language``."""
    return word[0] if language == "zh" else word[1]


def in_language(words: Words, language: Language) -> dict[str, Any]:
    """The tree of ``words`` with each pair replaced by its word in ``language``: the same keys
    whichever the language."""
    return {
        key: word_in(value, language) if isinstance(value, tuple) else in_language(value, language)
        for key, value in words.items()
    }


def chinese(words: Words) -> dict[str, Any]:
    """The Chinese tree: what the CLI and the Python callers read."""
    return in_language(words, "zh")


class WireNames(Protocol):
    """A proto enum's wire names (``kbcore.vocabulary``), named here by what is used of them, so
    that the catalogue itself needs no generated code and whoever reads words need not load it."""

    def name(self, value: int) -> str: ...


def named(names: WireNames, words: Mapping[int, Word]) -> dict[str, Word]:
    """Words keyed by proto enum values, keyed instead by the values' wire names."""
    return {names.name(value): word for value, word in words.items()}


def pairs(words: Words, path: tuple[str, ...] = ()) -> list[tuple[str, Word]]:
    """Every pair of the tree with its dotted path (``votes.up``): what the catalogue's checks read."""
    found: list[tuple[str, Word]] = []
    for key, value in words.items():
        if isinstance(value, tuple):
            found.append((".".join((*path, key)), value))
        else:
            found.extend(pairs(value, (*path, key)))
    return found
