"""Word and PowerPoint files written by python-docx and python-pptx."""

from __future__ import annotations

import pytest

from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, parse_document
from tests.fixtures import documents

LIMITS = ParseLimits()


def test_docx_headings_become_titles_and_tables_stay_whole() -> None:
    parsed = parse_document("说明书.docx", documents.docx_with_headings_and_table(), LIMITS)
    assert parsed.title == "星澜扫地机器人说明书"
    titles = {p.content[:8]: p.title for p in parsed.paragraphs}
    assert titles["星澜扫地机器人适"] == "第一章 产品介绍"
    assert titles["将机器人放回充电"] == "第一章 产品介绍 / 充电方法"
    table = next(p for p in parsed.paragraphs if documents.DOCX_TABLE_VALUE in p.content)
    assert table.title == "第二章 保养"
    assert table.content == "| 部件 | 保养周期 |\n| --- | --- |\n| 主刷 | 每周清理 |\n| 滤网 | 每季度一次 |"


def test_a_corrupt_docx_is_refused_as_damaged() -> None:
    data = documents.docx_with_headings_and_table()
    with pytest.raises(DocumentRejected, match="damaged"):
        parse_document("broken.docx", data[: len(data) // 2], LIMITS)
    without_body = documents.zip_of({"word/document.xml": b"<not-xml", "[Content_Types].xml": b"<x/>"})
    with pytest.raises(DocumentRejected, match="damaged: it cannot be read as a Word document"):
        parse_document("broken.docx", without_body, LIMITS)


def test_pptx_slides_are_sections_titled_by_their_slide_title() -> None:
    parsed = parse_document("培训.pptx", documents.pptx_deck(), LIMITS)
    rules = next(p for p in parsed.paragraphs if "刷卡登记" in p.content)
    assert rules.title == "年度安全培训"
    table = next(p for p in parsed.paragraphs if "8110" in p.content)
    assert table.title == "应急联系人" and table.content.startswith("| 岗位 | 电话 |")
    assert not any(p.content in ("年度安全培训", "应急联系人") for p in parsed.paragraphs)
