"""Word and PowerPoint files written by python-docx and python-pptx."""

from __future__ import annotations

import io

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


def test_a_docx_paragraph_with_its_own_outline_level_is_a_heading() -> None:
    """A heading in a style Word does not name "Heading n" is known by the outline level set on it."""
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    heading = document.add_paragraph("第三章 故障排除")
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "0")
    heading.paragraph_format.element.get_or_add_pPr().append(level)
    document.add_paragraph("机器人无法启动时，请先检查电源开关是否打开。")
    buffer = io.BytesIO()
    document.save(buffer)
    parsed = parse_document("手册.docx", buffer.getvalue(), LIMITS)
    body = next(p for p in parsed.paragraphs if "电源开关" in p.content)
    assert body.title == "第三章 故障排除"


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
