"""Every message the code names exists, with the holes the code fills, in both languages; and the
Chinese is Chinese. The test reads the code: each ``said("code", name=…)`` call with a literal
code (and each module constant that names a code, ``NAME = "code"``, used as ``said(NAME, …)``),
so a code without its message, or a hole the code does not fill, fails here rather than reaching
a reader as general words."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from kbcore.words.messages import LATIN_WORDS_ALLOWED, MESSAGES

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("kbcore", "services", "gateway", "cli")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/']*")
_FORMATTER = string.Formatter()


def _holes(template: str) -> set[str]:
    return {name for _, name, _, _ in _FORMATTER.parse(template) if name is not None}


def _string_constants(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found[node.targets[0].id] = node.value.value
    return found


def _calls() -> list[tuple[str, str, set[str] | None]]:
    """(where, code, the holes it fills; None when it passes ``**values`` the test cannot read)."""
    calls = []
    for top in PRODUCT:
        for path in (ROOT / top).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            constants = _string_constants(tree)
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "said" and node.args):
                    continue
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    code = first.value
                elif isinstance(first, ast.Name) and first.id in constants:
                    code = constants[first.id]
                else:
                    continue
                names = {k.arg for k in node.keywords if k.arg is not None}
                filled = None if any(k.arg is None for k in node.keywords) else names
                calls.append((f"{path.relative_to(ROOT)}:{node.lineno}", code, filled))
    return calls


CALLS = _calls()


def test_the_code_names_messages_in_many_places() -> None:
    assert len(CALLS) > 300  # the reader finds the calls; a rename of ``said`` would empty this


@pytest.mark.parametrize(("where", "code", "filled"), CALLS, ids=[where for where, _, _ in CALLS])
def test_every_message_the_code_names_exists_with_the_holes_it_fills(
    where: str, code: str, filled: set[str] | None
) -> None:
    assert code in MESSAGES, f"{where}: no message {code!r}"
    if filled is not None:
        assert filled == _holes(MESSAGES[code].en), where


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_both_languages_have_the_same_holes_and_the_chinese_no_english_words(code: str) -> None:
    message = MESSAGES[code]
    assert _holes(message.zh) == _holes(message.en)
    # What is printed as it is: the text between holes, less a path's own braces (``{id}``).
    literal = re.sub(r"\{[^{}]*\}", "", "".join(text for text, _, _, _ in _FORMATTER.parse(message.zh)))
    english_words = [
        word
        for word in _LATIN_WORD.findall(literal)
        if not (word.isupper() or any(c in word for c in "_./0123456789") or word in LATIN_WORDS_ALLOWED)
    ]
    assert not english_words, (message.zh, english_words)


def test_codes_are_names_not_sentences() -> None:
    assert all(re.fullmatch(r"[a-z0-9_]+", code) for code in MESSAGES)
