"""PowerPoint decks (.pptx): each slide a section titled by the slide's title, its text and tables under it."""

from __future__ import annotations

import io
from typing import Any

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, TextBudget
from services.retrieval.ingestion.splitter import Block, Heading, StructuredDocument, Table, Text


def _shape_blocks(shape: Any, title_id: int | None, budget: TextBudget) -> list[Block]:
    if shape.shape_id == title_id:
        return []
    if getattr(shape, "has_table", False):
        rows = tuple(tuple(cell.text.strip() for cell in row.cells) for row in shape.table.rows)
        return [Table(budget.rows(rows))] if any(any(r) for r in rows) else []
    if getattr(shape, "has_text_frame", False):
        lines = [p.text.strip() for p in shape.text_frame.paragraphs if p.text.strip()]
        return [Text(budget.read("\n".join(lines)))] if lines else []
    if hasattr(shape, "shapes"):  # a group
        return [b for child in shape.shapes for b in _shape_blocks(child, title_id, budget)]
    return []


def slides_document(filename: str, data: bytes, budget: TextBudget) -> StructuredDocument:
    """Every slide's title and shapes in order, each counted against ``budget`` as it is read."""
    from pptx import Presentation

    try:
        deck = Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors… for a damaged package
        raise DocumentRejected(said("damaged_cannot_be_read_powerpoint_deck", filename=f"{filename!r}")) from exc
    blocks: list[Block] = []
    for number, slide in enumerate(deck.slides, start=1):
        title_shape = slide.shapes.title
        title = title_shape.text.strip() if title_shape is not None and title_shape.has_text_frame else ""
        blocks.append(Heading(budget.read(title) if title else f"第{number}页", 2))
        title_id = title_shape.shape_id if title_shape is not None else None
        for shape in slide.shapes:
            blocks.extend(_shape_blocks(shape, title_id, budget))
    return StructuredDocument(title=(deck.core_properties.title or "").strip(), blocks=blocks)
