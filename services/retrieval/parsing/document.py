"""What parsing returns and refuses, shared by every format's parser."""

from __future__ import annotations

from dataclasses import dataclass

from kbcore.errors import InvalidRequest
from kbcore.settings import Settings
from services.retrieval.splitter import SplitParagraph


class DocumentRejected(InvalidRequest):
    """The file cannot become paragraphs; the message says why in words the uploader can act on."""


@dataclass(frozen=True)
class ParseLimits:
    """Bounds that keep a hostile or oversized file from holding a worker: checked while reading, not after."""

    max_paragraphs: int = 20_000
    archive_max_files: int = 200
    archive_max_bytes: int = 200 << 20

    @classmethod
    def from_settings(cls, settings: Settings) -> ParseLimits:
        return cls(settings.ingest_max_paragraphs, settings.archive_max_files, settings.archive_max_mb << 20)


@dataclass(frozen=True)
class ParsedDocument:
    """A parsed file: its own title (metadata, first top heading, else the file name) and its paragraphs."""

    title: str
    paragraphs: list[SplitParagraph]
