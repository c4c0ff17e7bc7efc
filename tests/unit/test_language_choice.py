"""Which language a reader gets: an explicit choice first, then Accept-Language by its q-values,
then Chinese; only the catalogue's two languages are ever chosen."""

from __future__ import annotations

import pytest

from kbcore.words.language import chosen_language


@pytest.mark.parametrize(
    ("explicit", "accept_language", "expected"),
    [
        (None, None, "zh"),
        (None, "", "zh"),
        (None, "en-US,en;q=0.9", "en"),
        (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        (None, "fr-FR, en;q=0.5, zh-Hant;q=0.8", "zh"),
        (None, "de, fr;q=0.9", "zh"),
        (None, "en;q=0, zh;q=0.1", "zh"),
        (None, "en;q=abc, zh;q=0.2", "zh"),
        (None, "*", "zh"),
        ("en", "zh-CN", "en"),
        ("EN-gb", None, "en"),
        ("klingon", "en", "en"),
    ],
)
def test_the_choice_follows_the_explicit_choice_then_the_preferences(
    explicit: str | None, accept_language: str | None, expected: str
) -> None:
    assert chosen_language(explicit, accept_language) == expected
