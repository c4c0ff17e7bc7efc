"""One entry point for every uploaded file: check what it is, parse it, split it, bound it."""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

from services.retrieval.parsing.document import DocumentRejected, ParsedDocument, ParseLimits
from services.retrieval.parsing.sniff import sniff
from services.retrieval.splitter import Heading, StructuredDocument, split_blocks


def _stem(filename: str) -> str:
    return PurePosixPath(PureWindowsPath(filename).name).stem


def finish(
    filename: str, document: StructuredDocument, *, fallback_title: str = "", max_paragraphs: int = 0
) -> ParsedDocument:
    """Split the structured form and refuse an empty or oversized result, with the reason."""
    top = next((b.text for b in document.blocks if isinstance(b, Heading) and b.level == 1), "")
    title = document.title or top or fallback_title
    paragraphs = split_blocks(document.blocks, document_title=document.title or top)
    if not paragraphs:
        raise DocumentRejected(f"{filename!r} contains no text")
    if max_paragraphs and len(paragraphs) > max_paragraphs:
        raise DocumentRejected(
            f"{filename!r} makes {len(paragraphs)} paragraphs; a document may have at most {max_paragraphs}: "
            "split it into smaller files or ask the operator to raise KB_INGEST_MAX_PARAGRAPHS"
        )
    return ParsedDocument(title=title, paragraphs=paragraphs)


def _structured(kind: str, filename: str, data: bytes, limits: ParseLimits) -> StructuredDocument:
    """The parser for one source type; the libraries are imported only when their format arrives."""
    if kind in ("md", "txt"):
        from services.retrieval.parsing.text import markdown_document

        return markdown_document(filename, data)
    if kind == "pdf":
        from services.retrieval.parsing.pdf import pdf_document

        return pdf_document(filename, data, limits)
    if kind == "docx":
        from services.retrieval.parsing.word import word_document

        return word_document(filename, data, limits)
    if kind in ("xlsx", "xls"):
        from services.retrieval.parsing.archive import check_container
        from services.retrieval.parsing.sheets import workbook_document

        if kind == "xlsx":
            check_container(filename, data, limits)
        return workbook_document(filename, data, limits)
    if kind == "csv":
        from services.retrieval.parsing.sheets import csv_document

        return csv_document(filename, data, limits)
    if kind == "html":
        from services.retrieval.parsing.text import decode_legacy
        from services.retrieval.parsing.web import html_document

        return html_document(decode_legacy(filename, data))
    if kind == "pptx":
        from services.retrieval.parsing.slides import slides_document

        return slides_document(filename, data, limits)
    raise DocumentRejected(f"{filename!r} is an archive: its files are taken in one by one, not as one document")


def parse_document(filename: str, data: bytes, limits: ParseLimits) -> ParsedDocument:
    """An uploaded file as a title and titled paragraphs; CPU-bound, so callers run it in a thread.

    Every refusal is a DocumentRejected whose message names the file and the problem.
    """
    kind = sniff(filename, data)
    document = _structured(kind, filename, data, limits)
    return finish(filename, document, fallback_title=_stem(filename), max_paragraphs=limits.max_paragraphs)
