"""An application's share page as its operator sets it up: the opening message and its
suggested questions, the name, logo and colour visitors see, a disclaimer, the input's hint,
and whether visitors see sources and the trace (docs/pages.md, "Per application").

Stored in ``application.page_setting`` (JSON) and checked here, once, whoever sends it: a value
a page cannot show safely is refused with a sentence and nothing of the update is stored. The
logo is kept as a ``data:`` URL (small, shown inline, no file to serve or clean up) and only as
one of the raster formats a browser draws without running anything: an SVG can carry script.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, NamedTuple

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.errors import InvalidRequest
from kbcore.limits import (
    MAX_DISCLAIMER_CHARS,
    MAX_LOGO_BYTES,
    MAX_PAGE_TITLE_CHARS,
    MAX_PLACEHOLDER_CHARS,
    MAX_PROLOGUE_CHARS,
    MAX_SUGGESTED_QUESTION_CHARS,
    MAX_SUGGESTED_QUESTIONS,
)
from kbcore.vocabulary import PROGRESS_MODE
from kbcore.words.said import said

ACCENT_COLOR = re.compile(r"#[0-9a-fA-F]{6}")
# A raster image's first bytes, by the media type a data: URL names it with.
IMAGE_SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),  # and "WEBP" at offset 8
}
_DATA_URL = re.compile(r"data:(image/[a-z+.-]+);base64,([A-Za-z0-9+/=\s]*)", re.DOTALL)
_FIELDS = ("prologue", "title", "logo", "accent_color", "disclaimer", "placeholder")


def suggested_questions(prologue: str) -> list[str]:
    """The opening message's suggested questions: its lines that start with "- " (MaxKB's way)."""
    return [line[2:].strip() for line in prologue.splitlines() if line.startswith("- ") and line[2:].strip()]


def page_message(stored: dict[str, Any]) -> pb.PageSetting:
    return pb.PageSetting(
        **{name: str(stored.get(name, "")) for name in _FIELDS},
        hide_sources=bool(stored.get("hide_sources", False)),
        hide_trace=bool(stored.get("hide_trace", False)),
        progress=PROGRESS_MODE.value(str(stored.get("progress", "")), default=pb.PROGRESS_MODE_UNSPECIFIED),
    )


def page_fields(message: pb.PageSetting) -> dict[str, Any]:
    """The stored form of a page setting, every field checked."""
    _check_prologue(message.prologue)
    for name, text, limit in (
        ("title", message.title, MAX_PAGE_TITLE_CHARS),
        ("placeholder", message.placeholder, MAX_PLACEHOLDER_CHARS),
        ("disclaimer", message.disclaimer, MAX_DISCLAIMER_CHARS),
    ):
        _check_text(name, text, limit, one_line=name != "disclaimer")
    if message.accent_color and not ACCENT_COLOR.fullmatch(message.accent_color):
        raise InvalidRequest(
            said("accent_colour_must_be_written_rrggbb", message_accent_color_20=f"{message.accent_color[:20]!r}")
        )
    if message.logo:
        _check_logo(message.logo)
    if message.progress and not PROGRESS_MODE.name(message.progress):
        raise InvalidRequest(said("unknown_progress_mode", message_progress=message.progress))
    return {
        **{name: getattr(message, name) for name in _FIELDS},
        "accent_color": message.accent_color.lower(),
        "hide_sources": message.hide_sources,
        "hide_trace": message.hide_trace,
        "progress": PROGRESS_MODE.name(message.progress),  # "" = the default
    }


def _check_text(name: str, text: str, limit: int, *, one_line: bool) -> None:
    if len(text) > limit:
        raise InvalidRequest(said("most_characters_one_has", name=name, limit=limit, len_text=len(text)))
    if "\x00" in text or (one_line and ("\n" in text or "\r" in text)):
        raise InvalidRequest(
            said("must_be_one_line_text", name=name) if one_line else said("must_not_contain_nul_characters", name=name)
        )


def _check_prologue(prologue: str) -> None:
    _check_text("prologue", prologue, MAX_PROLOGUE_CHARS, one_line=False)
    questions = suggested_questions(prologue)
    if len(questions) > MAX_SUGGESTED_QUESTIONS:
        raise InvalidRequest(
            said(
                "opening_message_suggests_questions_lines_starting",
                len_questions=len(questions),
                max_suggested_questions=MAX_SUGGESTED_QUESTIONS,
            )
        )
    too_long = next((q for q in questions if len(q) > MAX_SUGGESTED_QUESTION_CHARS), None)
    if too_long is not None:
        raise InvalidRequest(
            said(
                "suggested_question_most_characters_one_has",
                max_suggested_question_chars=MAX_SUGGESTED_QUESTION_CHARS,
                len_too_long=len(too_long),
            )
        )


def _check_logo(logo: str) -> None:
    """A data: URL of a PNG, JPEG, GIF or WebP image whose bytes are that image's, within size."""
    found = _DATA_URL.fullmatch(logo)
    if found is None:
        raise InvalidRequest(said("logo_must_be_image_sent_data"))
    media_type, encoded = found.groups()
    if media_type not in IMAGE_SIGNATURES:
        raise InvalidRequest(
            said(
                "logo_must_be_png_jpeg_gif_2" if media_type.startswith("image/svg") else "logo_must_be_png_jpeg_gif",
                media_type=media_type,
            )
        )
    if len(encoded) > MAX_LOGO_BYTES * 4 // 3 + 8:
        raise InvalidRequest(said("logo_most_kb", max_logo_bytes_1024=MAX_LOGO_BYTES // 1024))
    try:
        data = base64.b64decode(encoded, validate=False)
    except (binascii.Error, ValueError):
        raise InvalidRequest(said("logo_base64_text_damaged")) from None
    if len(data) > MAX_LOGO_BYTES:
        raise InvalidRequest(
            said("logo_most_kb_one_has_kb", max_logo_bytes_1024=MAX_LOGO_BYTES // 1024, len_data_1024=len(data) // 1024)
        )
    webp = media_type != "image/webp" or data[8:12] == b"WEBP"
    if not (data.startswith(IMAGE_SIGNATURES[media_type]) and webp):
        raise InvalidRequest(
            said(
                "logo_bytes_are_not_image",
                media_type_removeprefix_image_upper=media_type.removeprefix("image/").upper(),
            )
        )


class Hidden(NamedTuple):
    """What a reader of an application's answers does not get."""

    sources: bool
    trace: bool


def hidden_from(reader_is_visitor: bool, stored_page: dict[str, Any]) -> Hidden:
    """What the application (its stored ``page_setting``) hides from this reader: its switches
    apply to its share-link visitors; its operators and API keys always get the whole record."""
    page = page_message(stored_page)
    return Hidden(reader_is_visitor and page.hide_sources, reader_is_visitor and page.hide_trace)


def as_shown(record: pb.ChatRecord, hidden: Hidden) -> pb.ChatRecord:
    """``record`` without what the application hides from visitors, removed on the server: a
    page that merely did not draw them would still hand them to anyone reading the API. Without
    sources, no paragraph and no quoted sentence; without the trace, no rounds, no per-part
    verdicts and no context statistics (the stop reason stays: it is how the answer ended)."""
    retrieval = record.details.retrieval
    if hidden.sources:
        retrieval.ClearField("paragraphs")
        for part in retrieval.part_support:
            part.ClearField("quotes")
    if hidden.trace:
        retrieval.ClearField("rounds")
        retrieval.ClearField("part_support")
        record.details.ClearField("context")
    return record
