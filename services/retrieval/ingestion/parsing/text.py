"""Text files: Markdown and plain text as before, and the decoding CSV needs."""

from __future__ import annotations

from services.retrieval.ingestion.parsing.document import DocumentRejected
from services.retrieval.ingestion.splitter import StructuredDocument, UnsupportedDocument, decode_text, markdown_blocks


def markdown_document(filename: str, data: bytes) -> StructuredDocument:
    """Markdown or text; the file must be UTF-8, as the Markdown path always required."""
    try:
        text = decode_text(filename, data)
    except UnsupportedDocument as exc:
        raise DocumentRejected(str(exc)) from exc
    return StructuredDocument(blocks=markdown_blocks(text))


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
