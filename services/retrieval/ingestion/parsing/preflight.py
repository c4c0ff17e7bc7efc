"""The checks a file passes before any parsing library sees it: what its own structure shows.

Cheap and bounded (inflating counts and keeps nothing), so they run twice: in the request that
submits the file, where a refusal is a 400 the uploader reads at once, and again in the parsing
child before the parser, which is the one place that must never be skipped.
"""

from __future__ import annotations

import re

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.archive import check_container
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits
from services.retrieval.ingestion.parsing.pdf_streams import check_pdf_streams
from services.retrieval.ingestion.parsing.sheet_extent import WorkbookExtent

_SLIDE_PART = re.compile(r"^ppt/slides/slide\d+\.xml$")


def _check_slides(filename: str, data: bytes, limits: ParseLimits) -> None:
    slides = 0

    def count(part: str) -> None:
        nonlocal slides
        slides += bool(_SLIDE_PART.match(part))

    check_container(filename, data, limits, count)
    if slides > limits.max_pages:
        raise DocumentRejected(
            said(
                "has_slides_presentation_may_have_most",
                filename=f"{filename!r}",
                slides=slides,
                limits_max_pages=limits.max_pages,
            )
        )


def preflight(kind: str, filename: str, data: bytes, limits: ParseLimits) -> None:
    """Refuse, before parsing, a file of source type ``kind`` whose structure passes a limit."""
    if kind == "xlsx":
        check_container(filename, data, limits, WorkbookExtent(filename, limits).scanner)
    elif kind == "docx":
        check_container(filename, data, limits)
    elif kind == "pptx":
        _check_slides(filename, data, limits)
    elif kind == "pdf":
        check_pdf_streams(filename, data, limits)
