"""The documentation's links: every relative link resolves, every anchor names a heading.

The README is the entry point and links into ``docs/``; the documents link to each other and
to ``bench/``. A moved file or a renamed heading breaks a link silently on GitHub, so this
test reads every link the way GitHub renders it (headings slugged GitHub's way) and fails on
the first one that leads nowhere. It also keeps the README short: detail belongs in ``docs/``.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
README_MAX_LINES = 200

_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "bench").glob("*.md"))]
    return [path for path in found if path.is_file()]


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, where links and headings are Markdown."""
    lines, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = text.replace("`", "").lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = _HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links(path: Path) -> list[str]:
    found = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        found.extend(_LINK.findall(_INLINE_CODE.sub("", line)))
    return found


def broken_links(path: Path) -> list[str]:
    problems = []
    for target in links(path):
        if _EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not destination.exists():
            problems.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and unquote(anchor) not in anchors(destination):
            problems.append(f"{target}: no heading with that anchor")
    return problems


@pytest.mark.parametrize("path", documents(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail into docs/"


def test_the_checker_finds_a_broken_link_and_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## A heading, with `code`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md#a-heading-with-code) [self](#page) [web](https://example.com/x.md)\n"
        "[gone](missing.md) [bad anchor](other.md#nope) `[in code](missing-too.md)`\n"
        "```\n[in a fence](missing-three.md)\n# not a heading\n```\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["missing.md: no such file", "other.md#nope: no heading with that anchor"]


def test_slugs_follow_github() -> None:
    assert slug("Keyword IDF, learned per term") == "keyword-idf-learned-per-term"
    assert slug("Behind a reverse proxy") == "behind-a-reverse-proxy"
    assert slug("`KB_*` settings: what they do") == "kb_-settings-what-they-do"
    assert slug("探视 时间") == "探视-时间"
