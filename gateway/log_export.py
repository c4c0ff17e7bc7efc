"""Tables as files: CSV with a byte-order mark (spreadsheet programs then read Chinese text as
UTF-8) and XLSX. The rows arrive spreadsheet-safe from the presenter; the XLSX writer is told
that every text cell is a string (``write_string``), so nothing in a cell is ever read as a
formula, a number or a link."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import xlsxwriter

SHEET_NAME = "log"


def csv_bytes(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns))
    writer.writeheader()
    writer.writerows(rows)
    return ("\ufeff" + buffer.getvalue()).encode()


def xlsx_bytes(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> bytes:
    return workbook_bytes([(SHEET_NAME, columns, rows)])


def workbook_bytes(sheets: Sequence[tuple[str, Sequence[str], Sequence[dict[str, Any]]]]) -> bytes:
    """One worksheet per (name, columns, rows); names must be valid and distinct (``sheet_name``)."""
    buffer = io.BytesIO()
    # Row by row through a temporary file: a 50,000-row export is not held cell by cell in memory.
    book = xlsxwriter.Workbook(buffer, {"constant_memory": True})
    for sheet_name, columns, rows in sheets:
        sheet = book.add_worksheet(sheet_name)
        for column, name in enumerate(columns):
            sheet.write_string(0, column, name)
        for row_number, row in enumerate(rows, start=1):
            for column, name in enumerate(columns):
                _write(sheet, row_number, column, row.get(name))
    book.close()
    return buffer.getvalue()


def sheet_name(wanted: str, taken: set[str]) -> str:
    """A worksheet name from ``wanted``: without the characters a sheet name cannot hold, at
    most 31 characters, not blank, and distinct (case-insensitively) from ``taken``, which it joins."""
    base = "".join("_" if c in "[]:*?/\\" else c for c in wanted).strip("' ")[:31] or "Sheet"
    name, n = base, 1
    while name.lower() in taken:
        n += 1
        suffix = f" ({n})"
        name = base[: 31 - len(suffix)] + suffix
    taken.add(name.lower())
    return name


def _write(sheet: Any, row: int, column: int, value: Any) -> None:
    if isinstance(value, bool):
        sheet.write_boolean(row, column, value)
    elif isinstance(value, (int, float)):
        sheet.write_number(row, column, value)
    elif value is not None:
        sheet.write_string(row, column, str(value))
