"""Split a Markdown or plain-text document into titled paragraphs for embedding.

Paragraphs are blocks separated by blank lines. Markdown headings, and short
unpunctuated lines such as "三、年休假", become the title of the blocks under them, so each
paragraph keeps the section it belongs to. Blocks over the size limit are cut at sentence ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbcore.errors import InvalidRequest

MAX_PARAGRAPH_CHARS = 600
MAX_TITLE_CHARS = 60
SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt")

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])")
_SECTION_LIKE = re.compile(r"^[\S ]{1,40}$")


@dataclass(frozen=True)
class SplitParagraph:
    title: str
    content: str


class UnsupportedDocument(InvalidRequest):
    """The file cannot become paragraphs: wrong type, not UTF-8 text, or no text at all."""


def decode_text(filename: str, data: bytes) -> str:
    if not filename.lower().endswith(SUPPORTED_SUFFIXES):
        raise UnsupportedDocument(f"unsupported file type {filename!r}: upload a .md, .markdown or .txt file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedDocument(f"{filename!r} is not UTF-8 text (byte {exc.start} cannot be decoded)") from exc
    if "\x00" in text:
        raise UnsupportedDocument(f"{filename!r} looks like a binary file, not text")
    return text


def _is_section_line(block: str) -> bool:
    """A one-line block short enough and without sentence punctuation reads as a section title."""
    return "\n" not in block and bool(_SECTION_LIKE.match(block)) and not re.search(r"[。！？!?；;，,：:]$", block)


def _cut(text: str, limit: int) -> list[str]:
    if len(text) <= limit:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        while len(sentence) > limit:  # a single sentence longer than the limit
            head, sentence = sentence[:limit], sentence[limit:]
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if len(current) + len(sentence) > limit and current:
            pieces.append(current)
            current = ""
        current += sentence
    if current.strip():
        pieces.append(current)
    return [p.strip() for p in pieces if p.strip()]


def split_document(text: str, *, document_title: str = "", limit: int = MAX_PARAGRAPH_CHARS) -> list[SplitParagraph]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
    headings: dict[int, str] = {}
    doc_title = document_title
    section = ""
    pending_section = ""  # a title line still waiting for its first paragraph
    paragraphs: list[SplitParagraph] = []
    for block in blocks:
        lines = block.split("\n")
        body_lines: list[str] = []
        for line in lines:
            match = _HEADING.match(line)
            if match:
                level = len(match.group(1))
                headings = {k: v for k, v in headings.items() if k < level}
                headings[level] = match.group(2).strip()
                if level == 1 and not doc_title:
                    doc_title = headings[1]
                section = ""
            else:
                body_lines.append(line)
        body = "\n".join(body_lines).strip()
        if not body:
            continue
        if _is_section_line(body):
            if pending_section:  # two titles in a row: the first one was a short paragraph
                paragraphs.append(SplitParagraph(title=doc_title[:MAX_TITLE_CHARS], content=pending_section))
            section = pending_section = body
            continue
        pending_section = ""
        path = [v for k, v in sorted(headings.items()) if not (k == 1 and v == doc_title)]
        title = " / ".join([*path, section] if section else path) or doc_title
        for piece in _cut(body, limit):
            paragraphs.append(SplitParagraph(title=title[:MAX_TITLE_CHARS], content=piece))
    if pending_section:  # a short last line with nothing under it is content, not a title
        paragraphs.append(SplitParagraph(title=doc_title[:MAX_TITLE_CHARS], content=pending_section))
    return paragraphs
