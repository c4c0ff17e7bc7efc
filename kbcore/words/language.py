"""Which language a person reads: Chinese (the product's first language, and the default) or
English, chosen by an explicit choice (a page's ``?lang=``, the CLI's ``--lang``) or else by the
client's ``Accept-Language``.

Only the two catalogue languages exist, so the choice is the first of the caller's preferences
(highest q-value first, as RFC 9110 orders them) that is one of them; a caller naming neither
reads Chinese."""

from __future__ import annotations

from typing import Literal, get_args

Language = Literal["zh", "en"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
DEFAULT_LANGUAGE: Language = "zh"


def known_language(tag: str | None) -> Language | None:
    """The catalogue language a language tag names (``en-US`` → ``en``, ``zh-Hans-CN`` → ``zh``);
    None for any other tag or none."""
    primary = (tag or "").strip().split("-")[0].split("_")[0].lower()
    for language in LANGUAGES:
        if primary == language:
            return language
    return None


def _preferences(accept_language: str) -> list[tuple[float, int, str]]:
    """(q-value, position, tag) for each entry of an Accept-Language header; q=0 ("not this")
    and unreadable q-values are left out."""
    ranked = []
    for position, entry in enumerate(accept_language.split(",")):
        tag, _, parameters = entry.strip().partition(";")
        weight = 1.0
        name, _, value = parameters.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                weight = float(value)
            except ValueError:
                continue
        if weight > 0 and tag.strip():
            ranked.append((-weight, position, tag.strip()))
    return sorted(ranked)


def chosen_language(
    explicit: str | None = None, accept_language: str | None = None, default: Language = DEFAULT_LANGUAGE
) -> Language:
    """The language to answer in: the explicit choice if it names one, else the caller's most
    preferred catalogue language, else ``default`` (Chinese unless the surface says otherwise)."""
    if chosen := known_language(explicit):
        return chosen
    for _, _, tag in _preferences(accept_language or ""):
        if tag == "*":
            return default
        if chosen := known_language(tag):
            return chosen
    return default
