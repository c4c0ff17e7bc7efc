"""What parsing returns and refuses, and the text decoding, shared by every format's parser."""

from __future__ import annotations

from dataclasses import dataclass

from kbcore.errors import InvalidRequest
from kbcore.settings import Settings
from services.retrieval.ingestion.splitter import SplitParagraph


class DocumentRejected(InvalidRequest):
    """The file cannot become paragraphs; the message says why in words the uploader can act on."""


@dataclass(frozen=True)
class ParseLimits:
    """Bounds that keep a hostile or oversized file from holding a worker or its memory.

    The size bounds are checked before the expensive work (``preflight``) and again while
    reading; the memory and CPU bounds are the parsing child process's own limits (``sandbox``),
    which catch whatever a library does that no check foresaw.
    """

    max_paragraphs: int = 20_000
    archive_max_files: int = 200
    archive_max_bytes: int = 200 << 20
    max_ratio: int = 200
    max_stream_bytes: int = 64 << 20
    max_pages: int = 2000
    max_cells: int = 2_000_000
    max_chars: int = 20_000_000
    memory_mb: int = 1024
    cpu_seconds: int = 300

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
            memory_mb=settings.parse_memory_mb,
            cpu_seconds=settings.parse_cpu_seconds,
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
    raise DocumentRejected(f"{filename!r} is neither UTF-8 nor GB18030 text")
