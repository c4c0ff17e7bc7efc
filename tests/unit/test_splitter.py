"""Splitting documents into titled paragraphs, and refusing what is not text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from services.retrieval.ingestion.splitter import UnsupportedDocument, decode_text, split_document

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kb" / "docs" / "xinglan_leave_policy.md"


def test_section_lines_become_titles_of_the_paragraphs_below() -> None:
    paragraphs = split_document(SAMPLE.read_text())
    annual = next(p for p in paragraphs if "年休假5天" in p.content)
    assert annual.title == "三、年休假"
    assert all(p.content and not p.content.startswith("#") for p in paragraphs)
    assert not any(p.content == "三、年休假" for p in paragraphs), "a section line is a title, not a paragraph"


def test_markdown_headings_nest_into_the_title() -> None:
    text = "# 手册\n\n## 安装\n\n### 电源\n\n接通电源后按下开关。\n\n## 保养\n\n每月清洁一次。"
    paragraphs = split_document(text)
    assert [(p.title, p.content) for p in paragraphs] == [
        ("安装 / 电源", "接通电源后按下开关。"),
        ("保养", "每月清洁一次。"),
    ]


def test_long_blocks_are_cut_at_sentence_ends_within_the_limit() -> None:
    text = "。".join(f"第{i}句话的内容比较长一些用于测试切分" for i in range(80)) + "。"
    paragraphs = split_document(text, limit=200)
    assert len(paragraphs) > 1
    assert all(len(p.content) <= 200 for p in paragraphs)
    assert all(p.content.endswith("。") for p in paragraphs[:-1])
    assert "".join(p.content for p in paragraphs) == text


def test_unsupported_type_and_undecodable_text_are_refused_with_the_reason() -> None:
    with pytest.raises(UnsupportedDocument, match=r"unsupported file type 'a\.pdf'"):
        decode_text("a.pdf", b"%PDF-1.7")
    with pytest.raises(UnsupportedDocument, match="not UTF-8"):
        decode_text("a.txt", "年假".encode("gbk"))
    with pytest.raises(UnsupportedDocument, match="binary"):
        decode_text("a.md", b"abc\x00def")
    assert decode_text("a.MD", "\ufeff# 标题".encode()) == "# 标题"


def test_a_short_line_with_nothing_under_it_is_content_not_a_lost_title() -> None:
    assert [p.content for p in split_document("开馆时间")] == ["开馆时间"]
    assert [p.content for p in split_document("甲\n\n乙\n\n丙的说明。")] == ["甲", "丙的说明。"]


def test_a_fifty_mib_line_without_a_sentence_end_is_cut_in_seconds_and_whole() -> None:
    """Cut by position, not by slicing the rest off again and again: that copied the rest at every
    cut, and one such line took minutes."""
    text = "word " * (10 << 20)
    started = time.monotonic()
    paragraphs = split_document(text)
    assert time.monotonic() - started < 30, "linear in the line's length"
    assert len(paragraphs) == len(text) // 600 + 1 and {len(p.content) for p in paragraphs[:-1]} == {599}
    assert " ".join(p.content for p in paragraphs) == text.strip()


def test_a_heading_line_with_a_long_run_of_spaces_is_read_at_once() -> None:
    """The heading pattern backtracked through every split of such a run: 4,000 spaces took 74 s."""
    started = time.monotonic()
    paragraphs = split_document("# 手册" + " " * 20_000 + "下载 ##\n\n正文。")
    assert time.monotonic() - started < 5
    assert [(p.title, p.content) for p in paragraphs] == [(("手册" + " " * 20_000 + "下载")[:60], "正文。")]
