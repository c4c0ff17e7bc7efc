"""Word documents (.docx): heading styles become titles, tables stay whole, in reading order."""

from __future__ import annotations

import io
import re
from typing import Any

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, TextBudget
from services.retrieval.ingestion.splitter import Block, Heading, StructuredDocument, Table, Text

# "Heading 2" in English Word, "标题 2" in Chinese Word; "Title" is the document's own title.
_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)


def _heading_level(paragraph: Any) -> int | None:
    """The heading level from the style name, or from an outline level set on the paragraph
    itself (one its style alone declares is not looked up). python-docx names no outline level,
    so it is read from the paragraph's ``<w:p>``, which its public ``ParagraphFormat.element`` is."""
    style = paragraph.style
    name = (style.name or "").strip() if style is not None else ""
    if name.lower() in ("title", "标题"):
        return 1
    match = _HEADING_STYLE.match(name)
    if match:
        return int(match.group(1)) + 1  # Heading 1 sits under the title
    outline = paragraph.paragraph_format.element.find(".//{*}outlineLvl")
    if outline is not None:
        value = outline.get("{http://schemas.openxmlformats.org/wordprocessingml/2006/main}val", "")
        if value.isdigit() and int(value) < 9:
            return int(value) + 2
    return None


def _table_rows(table: Any) -> tuple[tuple[str, ...], ...]:
    """Cell texts row by row; a merged cell repeats its text in each column it spans, as Word shows it."""
    return tuple(tuple(cell.text.strip() for cell in row.cells) for row in table.rows)


def word_document(filename: str, data: bytes, budget: TextBudget) -> StructuredDocument:
    """The document's paragraphs and tables in reading order, each counted against ``budget`` as it is read."""
    import docx
    from docx.table import Table as DocxTable

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors… for a damaged package
        raise DocumentRejected(said("damaged_cannot_be_read_word_document", filename=f"{filename!r}")) from exc
    blocks: list[Block] = []
    for item in document.iter_inner_content():
        if isinstance(item, DocxTable):
            rows = budget.rows(_table_rows(item))
            if any(any(row) for row in rows):
                blocks.append(Table(rows))
            continue
        text = budget.read(item.text.strip())
        if not text:
            continue
        level = _heading_level(item)
        blocks.append(Heading(text, level) if level is not None else Text(text))
    return StructuredDocument(title=(document.core_properties.title or "").strip(), blocks=blocks)
