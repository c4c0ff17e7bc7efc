"""Web pages: the article is kept, navigation, header, sidebar and footer are not."""

from __future__ import annotations

import pytest

from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, parse_document, parse_html
from services.retrieval.ingestion.parsing.web import page_title
from tests.fixtures import documents


def test_only_the_main_content_becomes_paragraphs_with_its_headings_as_titles() -> None:
    parsed = parse_html(documents.html_page_with_nav(), url="http://intranet.test/travel")
    assert parsed.title == "差旅报销规定"
    text = "\n".join(p.title + " " + p.content for p in parsed.paragraphs)
    for boilerplate in (*documents.NAV_TEXT.split(), documents.FOOTER_TEXT, "相关链接", "星澜路1号"):
        assert boilerplate not in text
    hotel = next(p for p in parsed.paragraphs if "600元" in p.content)
    assert hotel.title == "住宿标准"
    table = next(p for p in parsed.paragraphs if "每天80元" in p.content)
    assert table.content.startswith("| 城市类别 | 伙食补助 |")


def test_a_page_built_from_divs_still_drops_its_menus() -> None:
    html = documents.html_page_with_nav()
    for tag, replacement in (("header", "div"), ("nav", "div"), ("aside", "div"), ("main", "div")):
        html = html.replace(f"<{tag}", f"<{replacement}").replace(f"</{tag}>", f"</{replacement}>")
    parsed = parse_document("page.html", html.encode(), ParseLimits())
    assert any("600元" in p.content for p in parsed.paragraphs)
    assert not any(word in p.content for p in parsed.paragraphs for word in documents.NAV_TEXT.split())


def test_a_page_without_text_is_refused() -> None:
    with pytest.raises(DocumentRejected, match=r"no readable content|contains no text"):
        parse_html("<html><body><nav><a href='/'>首页</a></nav></body></html>")


def test_a_page_is_named_by_its_title_in_its_own_encoding() -> None:
    assert page_title("<html><head><title>\n 差旅  &amp; 报销 </title></head></html>".encode()) == "差旅 & 报销"
    gbk = '<html><head><meta charset="gbk"><title>办事指南</title></head></html>'.encode("gbk")
    assert page_title(gbk) == "办事指南"
    assert page_title(b"<html><body><p>no title</p></body></html>") == ""
    assert page_title(b"<title><b>bold</b> words</title>") == "bold words"
    site = "<title>差旅报销规定 - 星澜科技内网</title></head><body><h1>差旅报销规定</h1>".encode()
    assert page_title(site) == "差旅报销规定", "the site's name left out"
    assert page_title(b"<title>A - B</title><h1>C</h1>") == "A - B", "no part repeated: the whole title"
    late = b"<html><head>" + b" " * (70 * 1024) + b"<title>too late</title>"
    assert page_title(late) == "", "only the head is read"
