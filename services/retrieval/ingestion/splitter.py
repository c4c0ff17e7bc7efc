"""Turn a document into titled paragraphs for embedding, through one structured form for every format.

Every parser (Markdown and text here; PDF, Word, spreadsheets, web pages and slides in
``services.retrieval.ingestion.parsing``) produces the same intermediate form: a stream of headings with
levels, text blocks, tables and already-titled records (FAQ pairs). One splitter turns that form
into paragraphs, so each format gets the same behaviour: a paragraph's title is the path of
headings above it, blocks over the size limit are cut at sentence ends, and a table stays a
whole Markdown table (a long one is cut by rows, each piece repeating the header row, so a cell
never loses the name of its column).

In Markdown, paragraphs are blocks separated by blank lines; headings, and short unpunctuated
lines such as "三、年休假", become the title of the blocks under them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kbcore.errors import InvalidRequest
from services.retrieval.ingestion.split_rules import DEFAULT_MAX_LENGTH, DEFAULT_RULES, MAX_TABLE_CHARS, SplitRules

MAX_PARAGRAPH_CHARS = DEFAULT_MAX_LENGTH
MAX_TITLE_CHARS = 60
SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt")

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])")
_SECTION_LIKE = re.compile(r"^[\S ]{1,40}$")


@dataclass(frozen=True)
class SplitParagraph:
    title: str
    content: str
    # Questions the source attaches to it (a QA spreadsheet's 问题 column): attached once served.
    questions: tuple[str, ...] = ()


# --- the structured form -------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    """A heading with its level (1 = the document's top level): it titles what follows, up to the next one."""

    text: str
    level: int


@dataclass(frozen=True)
class SectionLine:
    """A short unpunctuated line ("三、年休假") that titles what follows, below every heading.

    Unlike a heading it is only a guess: when another one follows before any text, it was a
    short paragraph after all, and is kept as content.
    """

    text: str


@dataclass(frozen=True)
class Text:
    """Running text: one or more sentences that belong together."""

    text: str


@dataclass(frozen=True)
class Table:
    """A table whose first row names the columns; it is kept whole as a Markdown table."""

    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Record:
    """A unit that carries its own title, such as an FAQ pair (title = question, content = answer),
    and maybe the questions to attach to it (a QA spreadsheet row)."""

    title: str
    content: str
    questions: tuple[str, ...] = ()


Block = Heading | SectionLine | Text | Table | Record


@dataclass
class StructuredDocument:
    """What every parser produces: the document's own title (may be empty) and its blocks in reading order."""

    title: str = ""
    blocks: list[Block] = field(default_factory=list)


# --- Markdown and plain text ---------------------------------------------------------------


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


def markdown_blocks(text: str) -> list[Block]:
    """Markdown or plain text as the structured form: blank lines separate blocks.

    The heading lines of a block come before its body, whatever their place inside it, so a
    heading written without a blank line after it still titles the text that follows.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks: list[Block] = []
    for chunk in (b.strip() for b in re.split(r"\n\s*\n", text)):
        if not chunk:
            continue
        body_lines: list[str] = []
        for line in chunk.split("\n"):
            match = _HEADING.match(line)
            if match:
                blocks.append(Heading(match.group(2).strip(), len(match.group(1))))
            else:
                body_lines.append(line)
        body = "\n".join(body_lines).strip()
        if body:
            blocks.append(SectionLine(body) if _is_section_line(body) else Text(body))
    return blocks


def split_document(text: str, *, document_title: str = "", limit: int = MAX_PARAGRAPH_CHARS) -> list[SplitParagraph]:
    """Markdown or plain text → structured form → paragraphs."""
    return split_blocks(markdown_blocks(text), document_title=document_title, rules=SplitRules(max_length=limit))


# --- structured form → paragraphs ----------------------------------------------------------


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


def _text_pieces(text: str, rules: SplitRules) -> list[str]:
    """A text block's paragraphs: a new one after every separator, then cut at sentence ends to
    the maximum length, each cut piece after the first repeating the end of the one before."""
    segments = [text]
    for separator in rules.separators:
        segments = [piece for segment in segments for piece in _after_each(segment, separator)]
    pieces: list[str] = []
    for segment in (s.strip() for s in segments):
        if not segment:
            continue
        cut = _cut(segment, rules.max_length - rules.overlap)
        pieces.append(cut[0])
        pieces.extend(
            previous[-rules.overlap :] + piece if rules.overlap else piece
            for previous, piece in itertools.pairwise(cut)
        )
    return pieces


def _after_each(text: str, separator: str) -> list[str]:
    """``text`` cut after each ``separator``, which stays with the piece it ends ("。" ends a
    sentence) unless it is whitespace (a blank line goes)."""
    parts = text.split(separator)
    kept = "" if separator.isspace() else separator
    return [part + kept for part in parts[:-1]] + [parts[-1]]


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ").strip() for c in cells) + " |"


def table_pieces(rows: Sequence[Sequence[str]], limit: int) -> list[str]:
    """A table as Markdown, cut by rows when over ``limit``; every piece starts with the header row.

    A row longer than the limit on its own still makes one piece (with the header): cutting
    inside a row would separate a value from its column's name.
    """
    if not rows:
        return []
    width = max(len(r) for r in rows)
    padded = [[*r, *[""] * (width - len(r))] for r in rows]
    head = _markdown_row(padded[0]) + "\n" + _markdown_row(["---"] * width)
    body = [_markdown_row(r) for r in padded[1:]]
    if not body:
        return [head]
    pieces: list[str] = []
    current: list[str] = []
    for line in body:
        if current and len(head) + sum(len(x) + 1 for x in current) + len(line) + 1 > limit:
            pieces.append("\n".join([head, *current]))
            current = []
        current.append(line)
    pieces.append("\n".join([head, *current]))
    return pieces


@dataclass
class _Titles:
    """The running state of titles while walking the blocks: headings by level, the section line, the pending guess."""

    doc_title: str
    headings: dict[int, str] = field(default_factory=dict)
    section: str = ""
    pending_section: str = ""  # a section line still waiting for its first paragraph

    def heading(self, block: Heading) -> None:
        self.headings = {k: v for k, v in self.headings.items() if k < block.level}
        self.headings[block.level] = block.text
        if block.level == 1 and not self.doc_title:
            self.doc_title = block.text
        self.section = ""

    def current(self) -> str:
        path = [v for k, v in sorted(self.headings.items()) if not (k == 1 and v == self.doc_title)]
        title = " / ".join([*path, self.section] if self.section else path) or self.doc_title
        return title[:MAX_TITLE_CHARS]


def _record_paragraphs(record: Record, limit: int, section: str) -> list[SplitParagraph]:
    """A record keeps its own title (the ``section``'s when it has none); a title too long to
    keep whole is repeated at the head of the content."""
    title = record.title.strip() or section
    content = record.content.strip()
    if len(title) > MAX_TITLE_CHARS:
        content = f"{title}\n{content}"
    pieces = _cut(content, limit)
    # The questions go with the first piece: the one that starts the answer.
    return [
        SplitParagraph(title=title[:MAX_TITLE_CHARS], content=p, questions=record.questions if i == 0 else ())
        for i, p in enumerate(pieces)
    ]


def split_blocks(
    blocks: Iterable[Block], *, document_title: str = "", rules: SplitRules = DEFAULT_RULES
) -> list[SplitParagraph]:
    """The structured form as titled paragraphs, each at most ``rules.max_length`` characters (a
    table row, or a table kept whole, may exceed it)."""
    titles = _Titles(doc_title=document_title)
    paragraphs: list[SplitParagraph] = []
    limit = rules.max_length
    for block in blocks:
        if isinstance(block, Heading) and block.level > rules.title_levels:
            block = Text(block.text)  # a heading deeper than the rules take stays in the text
        if isinstance(block, Heading):
            titles.heading(block)
            continue
        if isinstance(block, SectionLine):
            if titles.pending_section:  # two titles in a row: the first one was a short paragraph
                paragraphs.append(
                    SplitParagraph(title=titles.doc_title[:MAX_TITLE_CHARS], content=titles.pending_section)
                )
            titles.section = titles.pending_section = block.text
            continue
        titles.pending_section = ""
        if isinstance(block, Text):
            pieces = _text_pieces(block.text.strip(), rules) if block.text.strip() else []
        elif isinstance(block, Table):
            pieces = table_pieces(block.rows, MAX_TABLE_CHARS if rules.keep_tables else limit)
        else:
            paragraphs.extend(_record_paragraphs(block, limit, titles.current()))
            continue
        paragraphs.extend(SplitParagraph(title=titles.current(), content=piece) for piece in pieces)
    if titles.pending_section:  # a short last line with nothing under it is content, not a title
        paragraphs.append(SplitParagraph(title=titles.doc_title[:MAX_TITLE_CHARS], content=titles.pending_section))
    return paragraphs
