"""Web pages: the main content only (readability), then its headings, paragraphs, lists and tables.

Navigation, headers, footers and sidebars repeat on every page of a site; indexed, they would
match every question about "联系我们" and crowd out the article. readability-lxml scores the
page's blocks by text density and keeps the article; semantic boilerplate elements are removed
first so a short page cannot be mistaken for its menu.
"""

from __future__ import annotations

import html as html_text
import re
from typing import Any

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, TextBudget
from services.retrieval.ingestion.splitter import Block, Heading, StructuredDocument, Table, Text

_BOILERPLATE = ("nav", "header", "footer", "aside", "script", "style", "noscript", "form", "template")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_TEXT_TAGS = frozenset({"p", "li", "pre", "blockquote", "dd", "dt", "figcaption", "caption"})
_BLOCK_TAGS = frozenset({*_HEADINGS, *_TEXT_TAGS, "table", "div", "section", "article", "main", "ul", "ol", "dl"})
# Where a page's <title> is looked for when it names its document: the head, bounded, read
# without a parser (this runs where the upload is received, not in the parsing sandbox).
_HEAD_BYTES = 64 * 1024
_TITLE = re.compile(rb"<title[^>]*>(.{1,2000}?)</title\s*>", re.IGNORECASE | re.DOTALL)
_H1 = re.compile(rb"<h1[^>]*>(.{1,2000}?)</h1\s*>", re.IGNORECASE | re.DOTALL)
_TITLE_SEPARATORS = re.compile(r"\s+[-|_–—·]\s+|\s*[|｜]\s*")
_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9_-]{1,40})""", re.IGNORECASE)


def _strip_boilerplate(html: str) -> str:
    import lxml.html

    root = lxml.html.document_fromstring(html)
    for element in root.xpath("|".join(f"//{tag}" for tag in _BOILERPLATE)):
        if element.getparent() is not None:
            element.drop_tree()
    return str(lxml.html.tostring(root, encoding="unicode"))


def _table(element: Any, budget: TextBudget) -> Table:
    rows = []
    for row in element.iter("tr"):
        rows.append(tuple(" ".join(cell.text_content().split()) for cell in row if cell.tag in ("td", "th")))
    return Table(budget.rows(tuple(r for r in rows if any(r))))


def _walk(element: Any, blocks: list[Block], budget: TextBudget) -> None:
    """Blocks in document order: a heading, table or text element is taken whole, anything else
    is entered; each block's text is counted against ``budget`` as it is taken."""
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _HEADINGS:
            text = budget.read(" ".join(child.text_content().split()))
            if text:
                blocks.append(Heading(text, _HEADINGS[tag]))
        elif tag == "table":
            table = _table(child, budget)
            if table.rows:
                blocks.append(table)
        elif tag in _TEXT_TAGS or (tag == "div" and not any(c.tag in _BLOCK_TAGS for c in child.iterdescendants())):
            text = budget.read(" ".join(child.text_content().split()))
            if text:
                blocks.append(Text(text))
        elif tag:
            _walk(child, blocks, budget)


def page_title(page: bytes) -> str:
    """The page's ``<title>`` as a person reads it ("" when it has none): what a web document is
    named by, instead of the last segment of its address ("index"). A title that adds the site's
    name ("差旅报销规定 - 星澜科技内网") is cut to the part the page's ``<h1>`` repeats."""
    head = page[:_HEAD_BYTES]
    found = _TITLE.search(head)
    if found is None:
        return ""
    declared = _CHARSET.search(head)
    encodings = [declared.group(1).decode("ascii")] if declared else []
    title = _text(found.group(1), encodings)
    heading = _H1.search(page[: _HEAD_BYTES * 4])
    first = _text(heading.group(1), encodings) if heading else ""
    parts = _TITLE_SEPARATORS.split(title)
    return first if len(parts) > 1 and first in parts else title


def _text(raw: bytes, encodings: list[str]) -> str:
    """Markup as the words it shows, decoded by the page's declared charset, else UTF-8 or GB18030."""
    for encoding in [*encodings, "utf-8", "gb18030"]:
        try:
            text = raw.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
        return " ".join(html_text.unescape(re.sub(r"<[^>]*>", "", text)).split())
    return ""


def html_document(html: str, budget: TextBudget) -> StructuredDocument:
    import lxml.html
    from lxml.etree import ParserError
    from readability import Document

    try:
        cleaned = _strip_boilerplate(html)
        article = Document(cleaned)
        title = article.short_title().strip()
        main = lxml.html.fragment_fromstring(article.summary(html_partial=True))
    except (ParserError, ValueError) as exc:
        raise DocumentRejected(said("web_page_has_no_readable_content")) from exc
    blocks: list[Block] = []
    _walk(main, blocks, budget)
    return StructuredDocument(title=title, blocks=blocks)
