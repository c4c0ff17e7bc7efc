"""Which language the CLI speaks: ``--lang`` if given, else the terminal's locale, else Chinese.

A terminal says its language through the locale, not through a header, so the locale takes the
place the browser's ``Accept-Language`` has on the pages. The variables are read as POSIX reads
them for messages: the first one set and non-empty of ``LC_ALL``, ``LC_MESSAGES`` and ``LANG``
decides, even when it names neither language (``LC_ALL=C`` wins over ``LANG=en_US.UTF-8``: the
person asked for the C locale, which names no language, so the product's default stands)."""

from __future__ import annotations

from collections.abc import Mapping

from kbcore.words.language import Language, chosen_language, known_language

LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")


def locale_language(env: Mapping[str, str]) -> Language | None:
    """The language the environment's messages locale names (``en_US.UTF-8`` → ``en``,
    ``zh_CN.UTF-8`` → ``zh``); None for ``C``, ``POSIX``, another language, or no locale."""
    for name in LOCALE_VARIABLES:
        value = env.get(name, "")
        if value:
            # language[_territory][.codeset][@modifier]: only the language part says anything here
            return known_language(value.partition(".")[0].partition("@")[0])
    return None


def cli_language(explicit: str | None, env: Mapping[str, str]) -> Language:
    """The language of every message the CLI prints, and of the gateway's answers to it."""
    return chosen_language(explicit, locale_language(env))
