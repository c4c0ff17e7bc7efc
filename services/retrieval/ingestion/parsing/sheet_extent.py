"""How many cells an .xlsx's sheets span, read from their XML before any library opens them.

calamine builds each sheet as one dense grid from its first to its last cell: a 5 KB file that
puts a single cell at XFD1048576 asks for 17 billion cells, and the process aborts (an
allocation failure in Rust is not an exception anyone can catch). So the cells' positions are
read here first, streaming through the inflated XML with a pattern and keeping nothing, and a
workbook whose grids add up past ``KB_PARSE_MAX_CELLS`` is refused. A sheet's ``<dimension>`` is
only a claim, which calamine does not use to size its grid; it is not trusted here either.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits

_SHEET_PART = re.compile(r"^xl/worksheets/[^/]+\.xml$")
_TAG = re.compile(rb"<(?:\w+:)?(row|c)\b([^>]*)>")
_CELL_REF = re.compile(rb'\br="([A-Za-z]{1,4})(\d{1,9})"')
_ROW_REF = re.compile(rb'\br="(\d{1,9})"')
_LONGEST_TAG = 1 << 20  # no honest cell or row tag comes near this


def _column_number(letters: bytes) -> int:
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


class _SheetReader:
    """One sheet's extent: the furthest row and column any cell sits at (cells without a
    reference follow the previous one, as readers place them)."""

    def __init__(self, on_end: Callable[[int], None], part: str, filename: str) -> None:
        self._on_end = on_end
        self._part = part
        self._filename = filename
        self._rest = b""
        self.row = 0
        self.column = 0
        self.max_row = 0
        self.max_column = 0

    def __call__(self, chunk: bytes) -> None:
        if not chunk:
            self._read(self._rest)
            self._on_end(self.max_row * self.max_column)
            return
        data = self._rest + chunk
        cut = data.rfind(b"<")
        if cut < 0:
            cut = len(data)
        self._read(data[:cut])
        self._rest = data[cut:]
        if len(self._rest) > _LONGEST_TAG:
            raise DocumentRejected(
                said("damaged_not_readable_sheet", self__filename=f"{self._filename!r}", self__part=f"{self._part!r}")
            )

    def _read(self, data: bytes) -> None:
        for match in _TAG.finditer(data):
            name, attributes = match.group(1), match.group(2)
            if name == b"row":
                reference = _ROW_REF.search(attributes)
                self.row = int(reference.group(1)) if reference else self.row + 1
                self.column = 0
                self.max_row = max(self.max_row, self.row)
                continue
            cell = _CELL_REF.search(attributes)
            if cell:
                self.column = _column_number(cell.group(1))
                self.row = max(self.row, int(cell.group(2)))
                self.max_row = max(self.max_row, self.row)
            else:
                self.column += 1
            self.max_column = max(self.max_column, self.column)


class WorkbookExtent:
    """The cells of every sheet of one workbook, added up as its parts are inflated; refuses as
    soon as the total passes the limit. ``scanner`` is what ``check_container`` asks per part."""

    def __init__(self, filename: str, limits: ParseLimits) -> None:
        self._filename = filename
        self._limit = limits.max_cells
        self.cells = 0

    def scanner(self, part: str) -> Callable[[bytes], None] | None:
        if not _SHEET_PART.match(part):
            return None
        return _SheetReader(self._add, part, self._filename)

    def _add(self, grid: int) -> None:
        self.cells += grid
        if self.cells > self._limit:
            raise DocumentRejected(
                said(
                    "spans_more_cells_rows_columns_sheets",
                    self__filename=f"{self._filename!r}",
                    self__limit=f"{self._limit:,}",
                )
            )
