"""Markdown table rows as sentences a reader can quote: "字段：值；字段：值".

Ingestion keeps a table as Markdown, its header row and the ``| --- |`` line first (a long
table is cut by rows, each piece repeating the header), so a cell never loses its column's name.
Quoted as is, a row reads "| 残疾人证申领 | 身份证、户口簿 |": the reader has to guess what each
cell is. Named by the header of its own paragraph, the row says it, and every cell value stays
verbatim, so a fact found in the table is found in the quote.
"""

from __future__ import annotations

import re

_SEPARATOR = re.compile(r"^\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?$")
_CELL_BORDER = re.compile(r"(?<!\\)\|")
_FIELD = "{name}：{value}"
_FIELDS = "；"


def _is_row(line: str) -> bool:
    return line.startswith("|") and line.endswith("|") and len(line) > 1


def _cells(line: str) -> list[str]:
    """A row's cells, their escaped pipes ("\\|", as ingestion writes a pipe inside a cell) restored."""
    inner = line[1:-1]
    return [cell.strip().replace("\\|", "|") for cell in _CELL_BORDER.split(inner)]


def readable_row(cells: list[str], header: list[str]) -> str:
    """One row as "字段：值；字段：值"; an empty cell says nothing and is left out, a cell beyond
    the header (or under an empty column name) is given as its value alone."""
    fields = []
    for index, value in enumerate(cells):
        if not value:
            continue
        name = header[index] if index < len(header) else ""
        fields.append(_FIELD.format(name=name, value=value) if name else value)
    return _FIELDS.join(fields)


def table_segments(text: str) -> list[tuple[str, bool]]:
    """``text`` in reading order as prose (``False``) and table rows (``True``), each row already
    written as "字段：值；…" under the header row above it. Header and ``| --- |`` lines are no
    sentences of their own; rows of a piece cut from its header keep their cells, joined by "；"."""
    if "|" not in text:
        return [(text, False)]
    segments: list[tuple[str, bool]] = []
    prose: list[str] = []
    header: list[str] = []
    lines = text.split("\n")
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not _is_row(line):
            header = []
            prose.append(raw)
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if _SEPARATOR.match(line):
            continue
        if _SEPARATOR.match(following) and "-" in following:
            header = _cells(line)  # the header row: it names the cells of the rows under it
            continue
        row = readable_row(_cells(line), header)
        if not row:
            continue
        if prose:
            segments.append(("\n".join(prose), False))
            prose = []
        segments.append((row, True))
    if prose:
        segments.append(("\n".join(prose), False))
    return segments
