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
    buffer = io.BytesIO()
    # Row by row through a temporary file: a 50,000-row export is not held cell by cell in memory.
    book = xlsxwriter.Workbook(buffer, {"constant_memory": True})
    sheet = book.add_worksheet(SHEET_NAME)
    for column, name in enumerate(columns):
        sheet.write_string(0, column, name)
    for row_number, row in enumerate(rows, start=1):
        for column, name in enumerate(columns):
            _write(sheet, row_number, column, row.get(name))
    book.close()
    return buffer.getvalue()


def _write(sheet: Any, row: int, column: int, value: Any) -> None:
    if isinstance(value, bool):
        sheet.write_boolean(row, column, value)
    elif isinstance(value, (int, float)):
        sheet.write_number(row, column, value)
    elif value is not None:
        sheet.write_string(row, column, str(value))
