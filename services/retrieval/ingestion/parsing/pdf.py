"""PDF files with a text layer: headings found by font size and numbering, ruled tables kept whole, lines joined into paragraphs.

A PDF stores positioned characters, not paragraphs. pdfplumber (on pdfminer.six) gives each
line with its characters' sizes and finds ruled tables, so headings are the lines set larger
than the body text (the bigger, the higher the level) and a table's cells stay in their rows.
Pages without drawn lines skip table finding, which is most of the cost.

Sub-headings are often set in the body's own font ("一、投放时间", "（二）申请材料", "3.1 范围"):
a line that stands alone, starts with such a number, is short and ends without punctuation
titles the paragraphs under it (a ``SectionLine``). Several in a row of the same numbering
("1. 身份证" "2. 户口簿") are a list, and stay text.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits, TextBudget
from services.retrieval.ingestion.splitter import Block, Heading, SectionLine, StructuredDocument, Table, Text

_SENTENCE_END = re.compile(r"[。！？!?；;：:.]$")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_PAGE_NUMBER = re.compile(r"^[-—\s]*(?:第\s*)?\d+\s*(?:页|/\s*\d+)?[-—\s]*$")
# Only a line this short can be a page number: the pattern backtracks through a run of spaces,
# so a long line is never given to it.
_PAGE_NUMBER_MAX_CHARS = 20
_HEADING_RATIO = 1.15
_HEADING_MAX_CHARS = 60  # a longer line set large is emphasis, not a heading
_NUMBERED_MAX_CHARS = 30  # a longer numbered line is a clause ("第三条 住宿费实行…"), not a title
# How sub-headings in the body font are numbered, one pattern per kind of numbering (a list is
# several lines of one kind in a row). An Arabic number needs its delimiter or a space after
# it ("2.1 收费标准"), so an amount ("1.5万元") is no number of a heading.
_NUMBERINGS = (
    re.compile(r"^第[一二三四五六七八九十百零〇两\d]+[章节篇部分]\s*\S"),
    re.compile(r"^[一二三四五六七八九十]+[、．.]\s*\S"),
    re.compile(r"^[（(][一二三四五六七八九十]+[）)]\s*\S"),
    re.compile(r"^\d+(?:\.\d+)+\s+\S"),
    re.compile(r"^\d+[、．]\s*\S|^\d+\.\s+\S"),
    re.compile(r"^[（(]\d+[）)]\s*\S"),
)
_UNFINISHED = re.compile(r"[。！？!?；;，,：:、]$")


@dataclass(frozen=True)
class _Line:
    text: str
    size: float
    top: float
    bottom: float
    x1: float
    page: int


def _too_many_pages(filename: str, limits: ParseLimits, pages: int | None = None) -> DocumentRejected:
    """``pages``: the count when the page tree declares it; None when only building them told."""
    if pages is not None:
        return DocumentRejected(
            said(
                "has_pages_pdf_may_have_most", filename=f"{filename!r}", pages=pages, limits_max_pages=limits.max_pages
            )
        )
    most = limits.max_pages
    return DocumentRejected(
        said("has_more_pages_pdf_may_have", filename=f"{filename!r}", limits_max_pages=most, limits_max_pages2=most)
    )


def _declared_pages(document: Any) -> int:
    """The page count the document's page tree declares (0 when it declares none readable)."""
    from pdfminer.pdftypes import resolve1

    tree = resolve1(document.catalog.get("Pages"))
    count = resolve1(tree.get("Count")) if isinstance(tree, dict) else None
    return count if isinstance(count, int) else 0


def _open(filename: str, data: bytes, limits: ParseLimits) -> Any:
    """The opened PDF, refused when damaged, encrypted or longer than the page limit; the limit is
    read from the page tree's own count first, and no more pages than it allows are ever built."""
    import pdfplumber

    try:
        pdf = pdfplumber.open(io.BytesIO(data), pages=list(range(1, limits.max_pages + 2)))
        declared = _declared_pages(pdf.doc)
        if declared > limits.max_pages:  # not closed: pdfplumber's close() builds every page first
            raise _too_many_pages(filename, limits, declared)
        built = len(pdf.pages)  # the page tree is read here: damage and passwords show up now
    except DocumentRejected:
        raise
    except Exception as exc:  # pdfplumber wraps every pdfminer failure in PdfminerException
        cause = exc.args[0] if exc.args else exc
        if "Password" in type(cause).__name__ or "encrypt" in str(cause).lower():
            raise DocumentRejected(
                said("encrypted_password_protected_remove_password_upload", filename=f"{filename!r}")
            ) from exc
        raise DocumentRejected(said("damaged_cannot_be_read_pdf", filename=f"{filename!r}")) from exc
    if built > limits.max_pages:  # a page tree whose count lied (its pages are built already)
        pdf.close()
        raise _too_many_pages(filename, limits)
    return pdf


def _page_items(page: Any, number: int, budget: TextBudget) -> list[tuple[float, _Line | Table]]:
    """One page's lines and tables, each with its vertical position; lines inside a table belong
    to the table. Each is counted against ``budget`` as the page is read."""
    tables = page.find_tables() if (page.rects or page.lines) else []
    boxes = [t.bbox for t in tables]
    items: list[tuple[float, _Line | Table]] = []
    for table in tables:
        rows = budget.rows(tuple(tuple(" ".join((c or "").split()) for c in row) for row in table.extract()))
        if any(any(r) for r in rows):
            items.append((table.bbox[1], Table(rows)))
    for line in page.extract_text_lines(return_chars=True, strip=True):
        middle = (line["top"] + line["bottom"]) / 2
        if any(x0 <= line["x0"] and line["x1"] <= x1 + 1 and top <= middle <= bottom for x0, top, x1, bottom in boxes):
            continue
        text = budget.read(line["text"].strip())
        if not text or (len(text) <= _PAGE_NUMBER_MAX_CHARS and _PAGE_NUMBER.match(text)):
            continue
        size = max((c.get("size", 0.0) for c in line["chars"]), default=0.0)
        items.append((line["top"], _Line(text, round(size * 2) / 2, line["top"], line["bottom"], line["x1"], number)))
    items.sort(key=lambda item: item[0])
    return items


def _heading_levels(lines: list[_Line]) -> dict[float, int]:
    """Sizes set clearly larger than the body text (the most used size), ranked into heading levels."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    if not weights:
        return {}
    body = weights.most_common(1)[0][0]
    sizes = sorted({s for s in weights if s >= body * _HEADING_RATIO}, reverse=True)[:6]
    return {size: level for level, size in enumerate(sizes, start=1)}


def _separator(left: str, right: str) -> str:
    """Lines of Chinese join without a space; lines of Latin script with one."""
    return "" if _CJK.search(left[-1:]) or _CJK.search(right[:1]) or left.endswith("-") else " "


def _ends_paragraph(previous: _Line, line: _Line, right_edge: float) -> bool:
    """A blank gap, a page turn after a finished sentence, or a short last line ending a sentence."""
    finished = bool(_SENTENCE_END.search(previous.text))
    if line.page != previous.page:
        return finished
    gap = line.top - previous.bottom
    if gap > 0.8 * max(previous.bottom - previous.top, 1.0):
        return True
    return finished and previous.x1 < right_edge - 2 * previous.size


def _numbering(line: str) -> int | None:
    """Which kind of numbering a one-line paragraph starts with, if it reads as a title."""
    if len(line) > _NUMBERED_MAX_CHARS or _UNFINISHED.search(line):
        return None
    return next((kind for kind, pattern in enumerate(_NUMBERINGS) if pattern.match(line)), None)


def _with_section_lines(blocks: list[Block], one_line: set[int]) -> list[Block]:
    """The one-line text blocks that read as numbered titles, as section lines, unless their
    neighbour is a one-line block numbered alike (then they are the items of a list)."""
    kinds = {i: _numbering(block.text) for i, block in enumerate(blocks) if i in one_line and isinstance(block, Text)}
    shown: list[Block] = []
    for i, block in enumerate(blocks):
        kind = kinds.get(i)
        titles = kind is not None and kind not in (kinds.get(i - 1), kinds.get(i + 1))
        shown.append(SectionLine(block.text) if titles and isinstance(block, Text) else block)
    return shown


def _blocks(items: list[_Line | Table], levels: dict[float, int], right_edge: float) -> list[Block]:
    blocks: list[Block] = []
    one_line: set[int] = set()  # indexes of the text blocks made of a single line
    # The text block being read: its lines with what joins them, joined once when it closes (a
    # paragraph grown line by line would be copied whole at every line).
    parts: list[str] = []
    lines = 0
    previous: _Line | None = None

    def close_text() -> None:
        if lines == 1:
            one_line.add(len(blocks))
        blocks.append(Text("".join(parts)))

    for item in items:
        if isinstance(item, _Line) and (item.size not in levels or len(item.text) > _HEADING_MAX_CHARS):
            if parts and previous is not None and _ends_paragraph(previous, item, right_edge):
                close_text()
                parts, lines = [], 0
            if parts:
                parts.append(_separator(parts[-1], item.text))
            parts.append(item.text)
            lines += 1
            previous = item
            continue
        if parts:
            close_text()
            parts, lines, previous = [], 0, None
        last = blocks[-1] if blocks else None
        if isinstance(item, Table):
            blocks.append(item)
        elif isinstance(last, Heading) and last.level == levels[item.size] and len(last.text) <= _HEADING_MAX_CHARS:
            # a heading set on two lines (a long run of them is not one heading)
            blocks[-1] = Heading(last.text + _separator(last.text, item.text) + item.text, last.level)
        else:
            blocks.append(Heading(item.text, levels[item.size]))
    if parts:
        close_text()
    return _with_section_lines(blocks, one_line)


def pdf_document(filename: str, data: bytes, limits: ParseLimits, budget: TextBudget) -> StructuredDocument:
    """The PDF's text layer in reading order, counted against ``budget`` page by page as it is read."""
    pdf = _open(filename, data, limits)
    with pdf:
        items: list[_Line | Table] = []
        images = 0
        for number, page in enumerate(pdf.pages):
            items.extend(item for _, item in _page_items(page, number, budget))
            images += len(page.images)
            page.close()  # drop the page's cached objects: a 300-page file stays small in memory
        title = str(pdf.metadata.get("Title") or "").strip()
        title = "" if title.lower() in ("untitled", "(untitled)", "(anonymous)") else title
    lines = [i for i in items if isinstance(i, _Line)]
    if not lines and not any(isinstance(i, Table) for i in items):
        if images:
            raise DocumentRejected(said("has_no_text_layer_looks_scanned", filename=f"{filename!r}"))
        raise DocumentRejected(said("contains_no_text", filename=f"{filename!r}"))
    right_edge = max((line.x1 for line in lines), default=0.0)
    return StructuredDocument(title=title, blocks=_blocks(items, _heading_levels(lines), right_edge))
