"""The pages (the visitor chat page and the operator page) take every word they show from the
catalogue: no Chinese is written in chat.html, admin.html or the code of any script of the pages
(comments may say what they like), and a page as served is whole in its language, with its link
to the other one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gateway.filled_pages import admin_page, chat_page, embed_script
from tests.page_words import CJK, english_words

STATIC = Path(__file__).resolve().parents[2] / "gateway" / "static"
IDEOGRAPH_OR_CJK_PUNCTUATION = CJK
PAGES = ("chat.html", "admin.html")
IMPORT = re.compile(r"""^\s*import\s[^;]*?from\s+["']\./([\w-]+\.js)["']""", re.MULTILINE)
# After these a "/" starts a regular expression, not a division.
REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
REGEX_AFTER_WORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "yield"}


def loaded_by(start: str) -> set[str]:
    """The scripts a page's module loads, following its imports."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(IMPORT.findall((STATIC / name).read_text(encoding="utf-8")))
    return seen


def _regex_may_start(code: list[str]) -> bool:
    before = "".join(code).rstrip()
    word = re.search(r"[\w$]+$", before)
    if word:
        return word.group() in REGEX_AFTER_WORDS
    return before[-1:] in REGEX_AFTER


def _skip_quoted(source: str, i: int, quote: str) -> int:
    """The index just past the string or regular expression starting at ``source[i]``."""
    in_class = False
    i += 1
    while i < len(source):
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if quote == "/" and char in "[]":
            in_class = char == "["
        elif char == quote and not in_class:
            return i + 1
        i += 1
    return i


def code_without_comments(source: str) -> str:
    """The JavaScript source with its comments and regular expressions left out: strings and
    template literals (with what their ``${…}`` hold) stay, and every identifier."""
    code: list[str] = []
    i = 0
    while i < len(source):
        two = source[i : i + 2]
        if two == "//":
            end = source.find("\n", i)
            i = len(source) if end < 0 else end
        elif two == "/*":
            i = source.index("*/", i) + 2
        elif source[i] in "'\"`":
            end = _skip_quoted(source, i, source[i])
            code.append(source[i:end])
            i = end
        elif source[i] == "/" and _regex_may_start(code):
            i = _skip_quoted(source, i, "/")
            code.append("/regex/")
        else:
            code.append(source[i])
            i += 1
    return "".join(code)


def test_the_reader_sees_comments_and_regexes_apart_from_code() -> None:
    source = 'const a = "词"; // 注释\n/* 块 */ const b = /[，。]/.test(x) ? 1 / 2 : `模板 ${"甲"}`;'
    kept = code_without_comments(source)
    assert "注释" not in kept and "块" not in kept and "，" not in kept
    assert "词" in kept and "模板" in kept and "甲" in kept and "1 / 2" in kept


def test_the_chat_page_loads_no_operator_script() -> None:
    chat = loaded_by("chat.js")
    assert {"labels.js", "api.js", "trace.js", "record.js", "chat-history.js", "votes.js", "dom.js"} <= chat
    assert [name for name in chat if name.startswith("admin")] == []


def test_the_operator_page_takes_its_words_from_labels_js() -> None:
    operator = loaded_by("admin.js")
    assert {"labels.js", "admin-words.js", "dom.js"} <= operator
    own = [
        name
        for name in operator - {"labels.js"}
        if "/ui/labels.json" in code_without_comments((STATIC / name).read_text(encoding="utf-8"))
    ]
    assert own == [], "labels.js loads the words in the page's own <html lang>, for every script"


@pytest.mark.parametrize("name", sorted(p.name for p in STATIC.glob("*.js")))
def test_no_chinese_is_written_in_the_code_of_a_page_script(name: str) -> None:
    code = code_without_comments((STATIC / name).read_text(encoding="utf-8"))
    lines = [line.strip() for line in code.splitlines() if IDEOGRAPH_OR_CJK_PUNCTUATION.search(line)]
    assert lines == [], f"{name} writes words inline instead of taking them from the catalogue"


@pytest.mark.parametrize("name", PAGES)
def test_a_page_holds_no_words_of_its_own(name: str) -> None:
    assert not IDEOGRAPH_OR_CJK_PUNCTUATION.search((STATIC / name).read_text(encoding="utf-8"))


def test_the_chat_page_is_served_whole_in_either_language() -> None:
    english = chat_page("en", {})
    chinese = chat_page("zh", {"embed": "bubble"})
    assert '<html lang="en">' in english and '<html lang="zh-CN">' in chinese
    assert "{{" not in english + chinese
    assert english.count('<span lang="zh-CN">中文</span>') == 1
    assert not CJK.search(english.replace('<span lang="zh-CN">中文</span>', ""))
    text = re.sub(r"<[^>]+>", " ", chinese[chinese.index("<body") :])  # the text a reader sees
    assert english_words(text.replace("English", "")) == []
    assert 'href="?embed=bubble&amp;lang=en"' in chinese, "the switch keeps the frame's address"
    assert 'href="?lang=zh"' in english


def test_the_embed_script_carries_its_words_in_both_languages() -> None:
    script = embed_script()
    assert "/*{{words}}*/" not in script
    assert '"en": {"missing_token": "Knowledge base Q&A: ' in script and '"title": "Knowledge base Q&A"' in script


def test_the_operator_page_is_served_whole_in_either_language() -> None:
    english = admin_page("en", {})
    chinese = admin_page("zh", {})
    assert '<html lang="en">' in english and '<html lang="zh-CN">' in chinese
    assert "{{" not in english + chinese
    assert english.count('<span lang="zh-CN">中文</span>') == 1
    assert not CJK.search(english.replace('<span lang="zh-CN">中文</span>', ""))
    text = re.sub(r"<[^>]+>", " ", chinese[chinese.index("<body") :])
    assert english_words(text.replace("English", "")) == []
    assert 'href="?lang=en"' in chinese and 'href="?lang=zh"' in english
    assert "<title>Knowledge base admin</title>" in english and "<title>知识库管理</title>" in chinese
