"""Decide what a file really is, from its first bytes, and refuse a name that lies about it.

The suffix routes the upload (the gateway checks only that); the content decides whether the
route is right. A PNG renamed to .pdf, or a PDF renamed to .docx, would otherwise reach a
parser that fails with a library's error, or worse, parse garbage into paragraphs.
"""

from __future__ import annotations

from kbcore.document_types import SUPPORTED_TYPES_SENTENCE, source_type_of_name
from kbcore.words.said import said
from services.retrieval.ingestion.parsing.archive import container_names
from services.retrieval.ingestion.parsing.document import DocumentRejected

_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # the compound-file header of .xls (and old .doc/.ppt)
_IMAGES = {b"\x89PNG": "png", b"\xff\xd8\xff": "jpeg", b"GIF8": "gif", b"BM": "bitmap"}
# What each kind of content is called when it is not what the file's name says.
_DESCRIPTIONS = {
    "pdf": said("pdf"),
    "docx": said("word_document_docx"),
    "xlsx": said("excel_workbook_xlsx"),
    "pptx": said("powerpoint_deck_pptx"),
    "zip": said("zip_archive"),
    "ole": said("old_binary_office_file_xls_doc"),
    "text": said("plain_text"),
    "png": said("png_image"),
    "jpeg": said("jpeg_image"),
    "gif": said("gif_image"),
    "bitmap": said("bitmap_image"),
    "binary": said("binary_file"),
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
    """What the bytes are: 'pdf', 'docx', 'xlsx', 'pptx', 'zip', 'ole', 'text', an image's kind,
    'binary', or 'damaged'."""
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return _zip_kind(data)
    if head.startswith(_OLE):
        return "ole"
    for magic, kind in _IMAGES.items():
        if head.startswith(magic):
            return kind
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary"
    return "text"


def sniff(filename: str, data: bytes) -> str:
    """The source type of an upload ('pdf', 'md', …) once its content agrees with its name; refuses otherwise."""
    announced = source_type_of_name(filename)
    if announced is None:
        raise DocumentRejected(
            said("not_supported_type", filename=f"{filename!r}", supported_types_sentence=SUPPORTED_TYPES_SENTENCE)
        )
    if not data.strip():
        raise DocumentRejected(said("empty", filename=f"{filename!r}"))
    kind = content_kind(data)
    if kind == "damaged":
        raise DocumentRejected(said("damaged_cut_short_corrupt_cannot_be", filename=f"{filename!r}"))
    if kind not in _ACCEPTS[announced]:
        found = _DESCRIPTIONS.get(kind, said("binary_file"))
        raise DocumentRejected(
            said(
                "named_but_content_rename_upload_right",
                filename=f"{filename!r}",
                announced_upper=announced.upper(),
                found=found,
            )
        )
    if announced == "xls" and kind == "xlsx":
        return "xlsx"
    return announced
