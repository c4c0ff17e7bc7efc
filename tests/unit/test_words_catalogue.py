"""The catalogue of the pages' and the CLI's words: both languages hold exactly the same words
under the same keys, neither leaks into the other, and a template's holes are the same in both,
so a page served in either language shows a whole page of it."""

from __future__ import annotations

from typing import Any

from gateway.labels import WORDS, labels_json
from gateway.words.catalogue import pairs
from tests.page_words import CJK, HOLE, english_words


def key_paths(tree: dict[str, Any], path: str = "") -> set[str]:
    found = set()
    for key, value in tree.items():
        found.add(path + key)
        if isinstance(value, dict):
            found |= key_paths(value, f"{path}{key}.")
    return found


def test_both_languages_have_exactly_the_same_keys() -> None:
    chinese, english = labels_json("zh"), labels_json("en")
    assert key_paths(chinese) == key_paths(english)
    assert len(key_paths(chinese)) > 400  # the whole tree, operator page included
    assert labels_json() == chinese, "Chinese unless asked otherwise"


def test_no_english_word_has_a_cjk_character() -> None:
    leaking = {path: english for path, (_, english) in pairs(WORDS) if CJK.search(english)}
    assert leaking == {}


def test_no_chinese_word_has_english_but_allowed_names() -> None:
    leaking = {path: english_words(chinese) for path, (chinese, _) in pairs(WORDS) if english_words(chinese)}
    assert leaking == {}
    assert english_words("输入问题，Enter 发送；{query} 见 KB_ADMIN_TOKEN 与 </body>") == []
    assert english_words("Compacting context · 正在压缩") == ["Compacting", "context"], "the check reads words"


def test_a_templates_holes_are_the_same_in_both_languages() -> None:
    differing = {
        path: (chinese, english)
        for path, (chinese, english) in pairs(WORDS)
        if sorted(HOLE.findall(chinese)) != sorted(HOLE.findall(english))
    }
    assert differing == {}
    assert sum(1 for _, (chinese, _) in pairs(WORDS) if HOLE.search(chinese)) > 20, "templates are checked"


def test_every_word_is_said_in_both_languages() -> None:
    assert [path for path, (chinese, english) in pairs(WORDS) if not chinese.strip() or not english.strip()] == []
