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

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from kbcore.errors import InvalidRequest
from kbcore.words.said import said
from services.retrieval.ingestion.split_rules import DEFAULT_MAX_LENGTH, DEFAULT_RULES, MAX_TABLE_CHARS, SplitRules

MAX_PARAGRAPH_CHARS = DEFAULT_MAX_LENGTH
MAX_TITLE_CHARS = 60
SUPPORTED_SUFFIXES = (".md", ".markdown", ".txt")

# A Markdown heading's marks; its text is the rest of the line without the closing marks
# (``_heading``). One pattern for the whole line (``(.+?)\s*#*\s*$``) backtracked through every
# split of a run of spaces: a line of 4,000 spaces after "# a" took 74 s.
_HEADING_MARK = re.compile(r"\s{0,3}(#{1,6})\s")
# A sentence: up to and with its end mark, or the text left after the last one.
_SENTENCE = re.compile(r"[^。！？!?；;]*[。！？!?；;]|[^。！？!?；;]+")
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
        raise UnsupportedDocument(said("unsupported_file_type_upload_md_markdown", filename=f"{filename!r}"))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedDocument(
            said("not_utf_8_text_byte_cannot", filename=f"{filename!r}", exc_start=exc.start)
        ) from exc
    if "\x00" in text:
        raise UnsupportedDocument(said("looks_like_binary_file_not_text", filename=f"{filename!r}"))
    return text


def _is_section_line(block: str) -> bool:
    """A one-line block short enough and without sentence punctuation reads as a section title."""
    return "\n" not in block and bool(_SECTION_LIKE.match(block)) and not re.search(r"[。！？!?；;，,：:]$", block)


def _heading(line: str) -> Heading | None:
    """The line as a Markdown heading (``## 标题 ##``), or None."""
    mark = _HEADING_MARK.match(line)
    rest = line[mark.end(1) :] if mark else ""
    if mark is None or len(rest) < 2:  # the marks, a space, then at least one character
        return None
    text = rest.strip().rstrip("#").strip() or rest.strip()[:1]
    return Heading(text, len(mark.group(1)))


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
            heading = _heading(line)
            if heading is not None:
                blocks.append(heading)
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


def _cut(text: str, limit: int) -> Iterator[str]:
    """``text`` in pieces of at most ``limit`` characters, cut after a sentence's end where one
    falls within the limit, else at the limit, made one by one as they are asked for.

    Linear in the text's length: a sentence longer than the limit is cut by position. Slicing its
    head off and keeping the rest, again and again, copied the rest each time: a single line of
    50 MiB of words (no sentence end anywhere) took minutes.
    """
    if len(text) <= limit:
        yield text
        return
    current = ""
    for found in _SENTENCE.finditer(text):
        sentence, start = found.group(), 0
        while len(sentence) - start > limit:  # a single sentence longer than the limit
            if current.strip():
                yield current.strip()
            current = ""
            head = sentence[start : start + limit].strip()
            if head:
                yield head
            start += limit
        rest = sentence[start:] if start else sentence
        if len(current) + len(rest) > limit and current:
            if current.strip():
                yield current.strip()
            current = ""
        current += rest
    if current.strip():
        yield current.strip()


def _text_pieces(text: str, rules: SplitRules) -> Iterator[str]:
    """A text block's paragraphs: a new one after every separator, then cut at sentence ends to
    the maximum length, each cut piece after the first repeating the end of the one before."""
    segments = [text]
    for separator in rules.separators:
        segments = [piece for segment in segments for piece in _after_each(segment, separator)]
    for segment in (s.strip() for s in segments):
        if not segment:
            continue
        previous = ""
        for piece in _cut(segment, rules.max_length - rules.overlap):
            yield previous[-rules.overlap :] + piece if previous and rules.overlap else piece
            previous = piece


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


def _record_paragraphs(record: Record, limit: int, section: str) -> Iterator[SplitParagraph]:
    """A record keeps its own title (the ``section``'s when it has none); a title too long to
    keep whole is repeated at the head of the content."""
    title = record.title.strip() or section
    content = record.content.strip()
    if len(title) > MAX_TITLE_CHARS:
        content = f"{title}\n{content}"
    # The questions go with the first piece: the one that starts the answer.
    for i, piece in enumerate(_cut(content, limit)):
        yield SplitParagraph(title=title[:MAX_TITLE_CHARS], content=piece, questions=record.questions if i == 0 else ())


def split_blocks(
    blocks: Iterable[Block], *, document_title: str = "", rules: SplitRules = DEFAULT_RULES
) -> list[SplitParagraph]:
    """The structured form as titled paragraphs, each at most ``rules.max_length`` characters (a
    table row, or a table kept whole, may exceed it)."""
    return list(iter_paragraphs(blocks, document_title=document_title, rules=rules))


def iter_paragraphs(
    blocks: Iterable[Block], *, document_title: str = "", rules: SplitRules = DEFAULT_RULES
) -> Iterator[SplitParagraph]:
    """``split_blocks``, one paragraph at a time as each is made: a caller that counts them
    (``parsing.document.TextBudget``) stops the splitting at its limit, not after the whole document."""
    titles = _Titles(doc_title=document_title)
    limit = rules.max_length
    for block in blocks:
        if isinstance(block, Heading) and block.level > rules.title_levels:
            block = Text(block.text)  # a heading deeper than the rules take stays in the text
        if isinstance(block, Heading):
            titles.heading(block)
            continue
        if isinstance(block, SectionLine):
            if titles.pending_section:  # two titles in a row: the first one was a short paragraph
                yield SplitParagraph(title=titles.doc_title[:MAX_TITLE_CHARS], content=titles.pending_section)
            titles.section = titles.pending_section = block.text
            continue
        titles.pending_section = ""
        pieces: Iterable[str]
        if isinstance(block, Text):
            pieces = _text_pieces(block.text.strip(), rules) if block.text.strip() else ()
        elif isinstance(block, Table):
            pieces = table_pieces(block.rows, MAX_TABLE_CHARS if rules.keep_tables else limit)
        else:
            yield from _record_paragraphs(block, limit, titles.current())
            continue
        for piece in pieces:
            yield SplitParagraph(title=titles.current(), content=piece)
    if titles.pending_section:  # a short last line with nothing under it is content, not a title
        yield SplitParagraph(title=titles.doc_title[:MAX_TITLE_CHARS], content=titles.pending_section)
