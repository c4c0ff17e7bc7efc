"""Parsers that turn uploaded files (PDF, Word, spreadsheets, web pages, slides, text) into titled paragraphs.

Pure functions: no database, no network, no gRPC. Each format is read into the splitter's one
structured form (``services.retrieval.ingestion.splitter``), so every format is titled and cut the same
way. Every refusal is a ``DocumentRejected`` (an ``InvalidRequest``) with a message for people.
"""

from services.retrieval.ingestion.parsing.archive import expand_archive
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParsedDocument, ParseLimits
from services.retrieval.ingestion.parsing.parse import parse_document, parse_html
from services.retrieval.ingestion.parsing.sniff import sniff

__all__ = [
    "DocumentRejected",
    "ParseLimits",
    "ParsedDocument",
    "expand_archive",
    "parse_document",
    "parse_html",
    "sniff",
]
