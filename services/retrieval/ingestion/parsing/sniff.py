"""Decide what a file really is, from its first bytes, and refuse a name that lies about it.

The suffix routes the upload (the gateway checks only that); the content decides whether the
route is right. A PNG renamed to .pdf, or a PDF renamed to .docx, would otherwise reach a
parser that fails with a library's error, or worse, parse garbage into paragraphs.
"""

from __future__ import annotations

from kbcore.document_types import SUPPORTED_TYPES_SENTENCE, source_type_of_name
from services.retrieval.ingestion.parsing.archive import container_names
from services.retrieval.ingestion.parsing.document import DocumentRejected

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound-file header of .xls (and old .doc/.ppt)
_IMAGES = {b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image", b"GIF8": "a GIF image", b"BM": "a bitmap image"}
_DESCRIPTIONS = {
    "pdf": "a PDF",
    "docx": "a Word document (.docx)",
    "xlsx": "an Excel workbook (.xlsx)",
    "pptx": "a PowerPoint deck (.pptx)",
    "zip": "a zip archive",
    "ole": "an old binary Office file (.xls/.doc/.ppt)",
    "text": "text",
}
# Which content each announced type accepts. An .xls is often really an .xlsx (Excel opens both).
_ACCEPTS: dict[str, frozenset[str]] = {
    "pdf": frozenset({"pdf"}),
    "docx": frozenset({"docx"}),
    "xlsx": frozenset({"xlsx"}),
    "xls": frozenset({"ole", "xlsx"}),
    "pptx": frozenset({"pptx"}),
    "zip": frozenset({"zip"}),
    "md": frozenset({"text"}),
    "txt": frozenset({"text"}),
    "csv": frozenset({"text"}),
    "html": frozenset({"text"}),
}


def _zip_kind(data: bytes) -> str:
    listed = container_names(data)
    if listed is None:
        return "damaged"
    names = set(listed)
    if "word/document.xml" in names:
        return "docx"
    if "xl/workbook.xml" in names:
        return "xlsx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    return "zip"


def content_kind(data: bytes) -> str:
    """What the bytes are: 'pdf', 'docx', 'xlsx', 'pptx', 'zip', 'ole', 'text', or a description of something else."""
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _zip_kind(data)
    if head.startswith(_OLE):
        return "ole"
    for magic, description in _IMAGES.items():
        if head.startswith(magic):
            return description
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "a binary file"
    return "text"


def sniff(filename: str, data: bytes) -> str:
    """The source type of an upload ('pdf', 'md', …) once its content agrees with its name; refuses otherwise."""
    announced = source_type_of_name(filename)
    if announced is None:
        raise DocumentRejected(f"{filename!r} is not a supported type; {SUPPORTED_TYPES_SENTENCE}")
    if not data.strip():
        raise DocumentRejected(f"{filename!r} is empty")
    kind = content_kind(data)
    if kind == "damaged":
        raise DocumentRejected(f"{filename!r} is damaged: it is cut short or corrupt and cannot be opened")
    if kind not in _ACCEPTS[announced]:
        found = _DESCRIPTIONS.get(kind, kind)
        raise DocumentRejected(
            f"{filename!r} is named as {announced.upper()} but its content is {found}; rename it or upload the right file"
        )
    if announced == "xls" and kind == "xlsx":
        return "xlsx"
    return announced
