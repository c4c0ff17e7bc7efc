"""What parsing returns and refuses (its limits, and the text counted against them as it is read), and
the text decoding, shared by every format's parser."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from kbcore.errors import InvalidRequest
from kbcore.settings import Settings
from kbcore.words.said import said
from services.retrieval.ingestion.splitter import SplitParagraph


class DocumentRejected(InvalidRequest):
    """The file cannot become paragraphs; the message says why in words the uploader can act on."""


# A file whose ingestion ran past its wall-clock bound (``KB_INGEST_JOB_SECONDS``): its parse,
# ended by the sandbox, or the whole job, ended by the worker; one sentence, whichever it was.
# "{filename} took more than {seconds} seconds of wall-clock time to take in: …"
PAST_WALL_CLOCK = "took_more_seconds_wall_clock_time"


@dataclass(frozen=True)
class ParseLimits:
    """Bounds that keep a hostile or oversized file from holding a worker or its memory.

    The size bounds are checked before the expensive work (``preflight``) and again while
    reading, the text's characters, lines and paragraphs as it is read and split (``TextBudget``);
    the memory and CPU bounds are the parsing child process's own limits (``sandbox``), which
    catch whatever a library does that no check foresaw, and ``wall_seconds`` ends a parse that
    neither finishes nor uses its CPU time (the ingestion job's own wall-clock bound).
    """

    max_paragraphs: int = 20_000
    archive_max_files: int = 200
    archive_max_bytes: int = 200 << 20
    max_ratio: int = 200
    max_stream_bytes: int = 64 << 20
    max_pages: int = 2000
    max_cells: int = 2_000_000
    max_chars: int = 20_000_000
    max_lines: int = 2_000_000
    memory_mb: int = 1024
    cpu_seconds: int = 300
    wall_seconds: int = 3600

    @classmethod
    def from_settings(cls, settings: Settings) -> ParseLimits:
        return cls(
            max_paragraphs=settings.ingest_max_paragraphs,
            archive_max_files=settings.archive_max_files,
            archive_max_bytes=settings.archive_max_mb << 20,
            max_ratio=settings.archive_max_ratio,
            max_stream_bytes=settings.parse_max_stream_mb << 20,
            max_pages=settings.parse_max_pages,
            max_cells=settings.parse_max_cells,
            max_chars=settings.parse_max_chars,
            max_lines=settings.parse_max_lines,
            memory_mb=settings.parse_memory_mb,
            cpu_seconds=settings.parse_cpu_seconds,
            wall_seconds=settings.ingest_job_seconds,
        )


@dataclass(frozen=True)
class ParsedDocument:
    """A parsed file: its own title (metadata, first top heading, else the file name) and its paragraphs."""

    title: str
    paragraphs: list[SplitParagraph]
    unused_separators: tuple[str, ...] = ()  # separators of the split rules that cut nothing in it


def decode_legacy(filename: str, data: bytes) -> str:
    """UTF-8, else GB18030: Excel on Chinese Windows saves CSV and HTML in the local code page."""
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" in text:
            break
        return text
    raise DocumentRejected(said("neither_utf_8_nor_gb18030_text", filename=f"{filename!r}"))


# --- the text's own limits, counted while it is read and split ---------------------------
#
# Every parser hands the text it takes from the file to one ``TextBudget`` (a Markdown file's
# whole decoded text at once, a PDF's lines page by page, a sheet's rows, a Word paragraph, a
# web page's blocks), and the splitter's paragraphs are counted as they are made
# (``parse.finish``). The first count past its limit refuses the document, naming the limit and
# its setting: a 50 MiB file of one line is refused as soon as it is decoded, not after minutes of
# cutting it into 87,000 paragraphs only to find them too many. Characters are those of the text
# the parser reads out (spaces and line breaks included, a table's cells); lines are the file's
# lines of text (a PDF's text lines, a sheet's or a table's rows, a Word paragraph). The line
# bound stops a file that is all structure and no text (millions of one-character headings)
# before each line becomes an object in memory.

Rows = TypeVar("Rows", bound=Sequence[Sequence[str]])


def line_count(text: str) -> int:
    """Lines of ``text``, whatever ends them (``\\n``, ``\\r\\n`` or a lone ``\\r``)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n") + 1


class TextBudget:
    """One document's characters, lines and paragraphs so far, refused at the first past a limit."""

    def __init__(self, filename: str, limits: ParseLimits) -> None:
        self._filename = filename
        self._limits = limits
        self.characters = 0
        self.lines = 0
        self.paragraphs = 0

    def read(self, text: str) -> str:
        """Count ``text`` (returned as it is, to be used in place), refusing past a limit."""
        self._take(len(text), line_count(text))
        return text

    def rows(self, rows: Rows) -> Rows:
        """Count a table's rows (one line each, their cells' characters), returned as they are."""
        for row in rows:
            self._take(sum(len(cell) for cell in row), 1)
        return rows

    def paragraph(self) -> None:
        """Count one paragraph the splitter made, refusing past the limit."""
        self.paragraphs += 1
        if self.paragraphs > self._limits.max_paragraphs:
            filename, limit = self._filename, self._limits.max_paragraphs
            raise DocumentRejected(
                said("makes_more_paragraphs_most_one_document", filename=f"{filename!r}", limit=f"{limit:,}")
            )

    def _take(self, characters: int, lines: int) -> None:
        self.characters += characters
        self.lines += lines
        filename = self._filename
        if self.characters > self._limits.max_chars:
            limit = self._limits.max_chars
            raise DocumentRejected(
                said("has_more_characters_text_most_one", filename=f"{filename!r}", limit=f"{limit:,}")
            )
        if self.lines > self._limits.max_lines:
            limit = self._limits.max_lines
            raise DocumentRejected(said("has_more_lines_text_most_one", filename=f"{filename!r}", limit=f"{limit:,}"))
