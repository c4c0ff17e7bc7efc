"""PDF parsing on files written by reportlab: Chinese text, headings, tables, and the refusals."""

from __future__ import annotations

import pytest

from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, parse_document
from tests.fixtures import documents

LIMITS = ParseLimits()


def test_chinese_pdf_keeps_its_headings_as_titles_and_its_table_whole() -> None:
    parsed = parse_document("手册.pdf", documents.chinese_pdf(), LIMITS)
    assert parsed.title == "星澜净水器使用手册"
    install = next(p for p in parsed.paragraphs if "进水压力" in p.content)
    assert install.title == "一、安装说明"
    table = next(p for p in parsed.paragraphs if documents.PDF_TABLE_VALUE in p.content)
    assert table.title == "二、价格与保修"
    assert table.content.startswith("| 型号 | 价格 | 保修期 |\n| --- | --- | --- |")
    assert f"| XL-200 | {documents.PDF_TABLE_VALUE} | 三年 |" in table.content
    assert not any(p.content in ("一、安装说明", "星澜净水器使用手册") for p in parsed.paragraphs)


def test_numbered_lines_in_the_body_font_title_the_paragraphs_under_them() -> None:
    parsed = parse_document("指南.pdf", documents.numbered_pdf(), LIMITS)
    titled = {p.content[:8]: p.title for p in parsed.paragraphs}
    assert titled["居民生活垃圾每日"] == "一、投放时间"
    assert titled["沙发、床垫等大件"] == "（一）大件垃圾"
    assert titled["申请垃圾清运服务"] == titled["1. 身份证"] == "二、办理材料"
    assert titled["清运费按次收取，"] == titled["1.5万元"] == "2.1 收费标准"
    contents = [p.content for p in parsed.paragraphs]
    assert not any(c in ("一、投放时间", "（一）大件垃圾", "二、办理材料", "2.1 收费标准") for c in contents)
    # A numbered list stays text, and so do an unnumbered short line and an amount.
    for line in ("1. 身份证", "2. 户口簿", "3. 房屋租赁合同", "1.5万元"):
        assert any(line in c for c in contents), line
    assert not any(p.title.endswith(("身份证", "户口簿", "房屋租赁合同", "1.5万元")) for p in parsed.paragraphs)


def test_a_scanned_pdf_is_refused_as_having_no_text_layer() -> None:
    with pytest.raises(DocumentRejected, match="no text layer: it looks scanned"):
        parse_document("扫描件.pdf", documents.scanned_pdf(), LIMITS)


def test_an_encrypted_pdf_is_refused_with_the_reason() -> None:
    with pytest.raises(DocumentRejected, match=r"'secret\.pdf' is encrypted \(password-protected\)"):
        parse_document("secret.pdf", documents.encrypted_pdf(), LIMITS)


def test_a_damaged_pdf_is_refused_as_damaged() -> None:
    with pytest.raises(DocumentRejected, match="damaged: it cannot be read as a PDF"):
        parse_document("bad.pdf", b"%PDF-1.7\n" + b"garbage " * 100, LIMITS)


def test_a_long_pdf_keeps_its_chapter_titles_to_the_end() -> None:
    """Its speed is the bench's (``python -m bench --only documents``: 300 pages); this checks
    that headings found by size keep titling the pages after them."""
    parsed = parse_document("report.pdf", documents.big_pdf(30), LIMITS)
    assert len(parsed.paragraphs) >= 30
    last = parsed.paragraphs[-1]
    assert last.title == "第3章 运行维护规程" and "第30页第40行" in last.content
    assert all(len(p.content) <= 600 for p in parsed.paragraphs)


def test_too_many_paragraphs_are_refused_with_the_limit() -> None:
    with pytest.raises(DocumentRejected, match=r"more than 100 paragraphs, .*KB_INGEST_MAX_PARAGRAPHS"):
        parse_document("report.pdf", documents.big_pdf(30), ParseLimits(max_paragraphs=100))
