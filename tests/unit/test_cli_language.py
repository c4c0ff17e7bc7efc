"""Which language the CLI speaks: ``--lang`` (before or after the subcommand), else the
messages locale as POSIX reads it (LC_ALL, then LC_MESSAGES, then LANG), else Chinese."""

from __future__ import annotations

import pytest

from cli.language import cli_language, locale_language
from cli.main import parse_args


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "en_GB"}, "en"),
        ({"LANG": "en.UTF-8@euro"}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.Big5"}, "zh"),
        ({"LANG": "C"}, None),
        ({"LANG": "C.UTF-8"}, None),
        ({"LANG": "POSIX"}, None),
        ({"LANG": "fr_FR.UTF-8"}, None),
        ({}, None),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_US.UTF-8", "LC_ALL": "en_US.UTF-8"}, "en"),
        ({"LANG": "en_US.UTF-8", "LC_ALL": ""}, "en"),  # an empty variable is not set
        ({"LANG": "en_US.UTF-8", "LC_ALL": "C"}, None),  # the C locale was asked for: no language
    ],
)
def test_the_locale_names_the_language_as_posix_reads_it(env: dict[str, str], expected: str | None) -> None:
    assert locale_language(env) == expected


def test_lang_wins_over_the_locale_and_chinese_is_the_default() -> None:
    assert cli_language("zh", {"LANG": "en_US.UTF-8"}) == "zh"
    assert cli_language("en", {"LANG": "zh_CN.UTF-8"}) == "en"
    assert cli_language(None, {"LANG": "en_US.UTF-8"}) == "en"
    assert cli_language(None, {"LANG": "C.UTF-8"}) == "zh"
    assert cli_language(None, {}) == "zh"


def test_lang_goes_before_or_after_the_subcommand() -> None:
    assert parse_args(["--lang", "en", "ask", "app", "q"]).lang == "en"
    assert parse_args(["ask", "app", "q", "--lang", "en"]).lang == "en"
    assert parse_args(["--lang", "en", "preview", "a.md"]).lang == "en", "a subcommand without it keeps it"
    assert parse_args(["eval", "app", "q.jsonl"]).lang is None, "not given: the locale decides"


def test_only_the_two_languages_are_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--lang", "fr", "ask", "app", "q"])
    assert exit_.value.code == 2 and "invalid choice" in capsys.readouterr().err
