"""What a PDF's compressed streams inflate to, counted before pdfminer decodes any of them.

pdfminer inflates a content stream whole, in one call: a 306 KB file whose one stream inflates
to 1 GiB took the retrieval service up by 559 MB. Here every Flate stream is inflated once,
chunk by chunk, counting and keeping nothing, and the file is refused when one stream passes
``KB_PARSE_MAX_STREAM_MB`` or all of them together ``KB_ARCHIVE_MAX_MB``. Image streams are not
counted: the text parser never decodes them. A stream that is not Flate (or is damaged) is
skipped here and left to the parser, whose own process limits still hold.
"""

from __future__ import annotations

import re
import zlib

from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits

_STREAM = re.compile(rb"(?<!end)stream(?:\r\n|\n|\r)")
_OBJECT = re.compile(rb"\d+\s+\d+\s+obj\b")
_IMAGE = re.compile(rb"/Subtype\s*/Image\b")
_DICTIONARY_WINDOW = 1 << 16  # how far before ``stream`` its object's dictionary may start
_IN = 1 << 16
_OUT = 1 << 20


def _is_image(data: bytes, stream_at: int) -> bool:
    """Whether the object this stream belongs to declares itself an image."""
    begin = max(0, stream_at - _DICTIONARY_WINDOW)
    for found in _OBJECT.finditer(data, begin, stream_at):
        begin = found.end()
    return _IMAGE.search(data, begin, stream_at) is not None


def _inflated_size(data: memoryview, start: int, ceiling: int) -> int:
    """How many bytes the zlib stream at ``start`` inflates to, stopping once past ``ceiling``;
    0 when no zlib stream starts there."""
    inflater = zlib.decompressobj()
    total = 0
    position = start
    try:
        while not inflater.eof and position < len(data) and total <= ceiling:
            piece = inflater.decompress(data[position : position + _IN], _OUT)
            position += _IN
            total += len(piece)
            while inflater.unconsumed_tail and total <= ceiling:
                total += len(inflater.decompress(inflater.unconsumed_tail, _OUT))
    except zlib.error:
        return total
    return total


def check_pdf_streams(filename: str, data: bytes, limits: ParseLimits) -> None:
    """Refuse a PDF whose streams inflate past a limit, before the parser decodes them."""
    view = memoryview(data)
    left = limits.archive_max_bytes
    for match in _STREAM.finditer(data):
        if _is_image(data, match.start()):
            continue
        size = _inflated_size(view, match.end(), min(limits.max_stream_bytes, left))
        if size > limits.max_stream_bytes:
            raise DocumentRejected(
                said(
                    "has_compressed_stream_unpacks_more_mib",
                    filename=f"{filename!r}",
                    limits_max_stream_bytes_20=limits.max_stream_bytes >> 20,
                )
            )
        left -= size
        if left < 0:
            raise DocumentRejected(
                said(
                    "unpacks_more_mib_content_too_large",
                    filename=f"{filename!r}",
                    limits_archive_max_bytes_20=limits.archive_max_bytes >> 20,
                )
            )
