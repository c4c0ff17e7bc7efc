"""The CLI's own words: both languages hold every word with the same holes and neither leaks
into the other (the catalogue's checks, on the CLI's area), counts say "1 document" and
"3 documents" honestly, and every key the CLI's code names is a word, and every word is named."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cli.words import CliWords, Phrase
from gateway.words.catalogue import pairs
from gateway.words.cli_words import CLI
from tests.page_words import CJK, HOLE, english_words

CLI_CODE = Path(__file__).resolve().parents[2] / "cli"
KEY = re.compile(rf"^(?:{'|'.join(CLI)})\.[a-z_.]+$")
COUNT_FORMS = (".one", ".other")


def test_every_word_is_said_in_both_languages() -> None:
    assert [path for path, (chinese, english) in pairs(CLI) if not chinese.strip() or not english.strip()] == []


def test_a_templates_holes_are_the_same_in_both_languages() -> None:
    differing = {
        path: (chinese, english)
        for path, (chinese, english) in pairs(CLI)
        if sorted(HOLE.findall(chinese)) != sorted(HOLE.findall(english))
    }
    assert differing == {}


def test_no_english_word_has_a_cjk_character() -> None:
    assert {path: english for path, (_, english) in pairs(CLI) if CJK.search(english)} == {}


def test_no_chinese_word_has_english_but_allowed_names() -> None:
    assert {path: english_words(chinese) for path, (chinese, _) in pairs(CLI) if english_words(chinese)} == {}


def test_a_count_is_a_group_of_one_and_other_that_both_say_the_count() -> None:
    groups = {path.rsplit(".", 1)[0] for path, _ in pairs(CLI) if path.endswith(COUNT_FORMS)}
    assert groups, "the CLI counts documents, paragraphs, questions…"
    paths = {path for path, _ in pairs(CLI)}
    for group in groups:
        assert {f"{group}{form}" for form in COUNT_FORMS} <= paths, group
        assert all("{count}" in word for form in COUNT_FORMS for word in dict(pairs(CLI))[f"{group}{form}"])


def test_english_counts_one_and_many_chinese_counts_with_a_measure_word() -> None:
    english, chinese = CliWords("en"), CliWords("zh")
    assert english.counted("ingest.documents", 1) == "1 document"
    assert english.counted("ingest.documents", 3) == "3 documents"
    assert english.counted("ingest.paragraphs", 0) == "0 paragraphs"
    assert chinese.counted("ingest.documents", 1) == "1 个文档"
    assert chinese.counted("ingest.paragraphs", 120) == "120 个段落"


def test_a_phrase_in_a_hole_is_said_in_the_same_language_and_a_missing_key_is_an_error() -> None:
    phrase = Phrase("errors.cannot_read", {"path": "a.md", "reason": Phrase("errors.missing_file")})
    assert CliWords("en").say(phrase) == "cannot read a.md: it does not exist"
    assert CliWords("zh").say(phrase) == "无法读取 a.md：文件不存在"
    with pytest.raises(KeyError):
        CliWords("en")("ingest.no_such_word")
    with pytest.raises(KeyError):
        CliWords("en")("ingest.documents", count=2)  # a group is not a word: counted() chooses


def test_the_shared_words_come_in_the_runs_language() -> None:
    english, chinese = CliWords("en"), CliWords("zh")
    assert english.document_status("ready") == "Ready" and chinese.document_status("ready") == "已就绪"
    assert (
        english.stop_reason("sufficient") == "Enough evidence found" and chinese.stop_reason("sufficient") == "资料充分"
    )
    assert english.stop_reason("") == "(none)" and chinese.stop_reason("") == "（无）"
    status = {"phase": "retrieving", "round": 2, "query": "探视时间"}
    assert (
        english.progress(status) == "Search round 2: 探视时间" and chinese.progress(status) == "第 2 轮检索：探视时间"
    )


def named_keys() -> set[str]:
    """Every string in the CLI's code that has the shape of a key of its words."""
    found = set()
    for path in CLI_CODE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and KEY.match(node.value):
                found.add(node.value)
    return found


def test_every_key_the_code_names_is_a_word_and_every_word_is_named() -> None:
    words = {path for path, _ in pairs(CLI)}
    groups = {path.rsplit(".", 1)[0] for path in words if path.endswith(COUNT_FORMS)}
    named = named_keys()
    assert named - words - groups == set(), "a key the code names that the catalogue lacks"
    unnamed = {path for path in words if path not in named and path.rsplit(".", 1)[0] not in named}
    assert unnamed == set(), "a word no code says"
