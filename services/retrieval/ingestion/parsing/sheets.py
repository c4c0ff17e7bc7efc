"""Spreadsheets (.xlsx, .xls, .csv): each row one paragraph that carries its column names.

A row read alone ("XL-100 400G 1280元") does not say which number is the price; written as
"产品: XL-100；规格: 400G；价格: 1280元" it answers "XL-100多少钱". A sheet whose header names
a question and an answer column is an FAQ: each row becomes a record titled by its question. A
sheet in the question-and-answer layout MaxKB imports and this service exports (分段标题, 分段内容,
问题 with one question per line) makes each row a paragraph with those questions attached.
Rows are counted while reading, so a 100,000-row sheet is refused at the paragraph limit
without building the rest.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Iterable, Iterator, Sequence
from pathlib import PurePosixPath
from typing import TypeAlias

from kbcore.limits import MAX_QUESTION_CHARS, MAX_QUESTIONS_PER_PARAGRAPH
from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import DocumentRejected, ParseLimits, TextBudget, decode_legacy
from services.retrieval.ingestion.splitter import Block, Heading, Record, StructuredDocument, Text

_QUESTION = frozenset({"问题", "问", "提问", "常见问题", "question", "q", "faq"})
# The QA layout's headers, matched by their start ("分段内容（必填…）" is MaxKB's template).
QA_TITLE, QA_CONTENT, QA_QUESTIONS = "分段标题", "分段内容", "问题"
_ANSWER = frozenset({"答案", "回答", "答", "解答", "answer", "a", "reply"})


def _cell(value: object) -> str:
    """A cell as a person reads it: 1280.0 as 1280, dates without a midnight time."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return value.date().isoformat()
    return str(value).strip()


def _faq_columns(header: Sequence[str]) -> tuple[int, int] | None:
    lowered = [h.strip().lower() for h in header]
    question = next((i for i, h in enumerate(lowered) if h in _QUESTION), None)
    answer = next((i for i, h in enumerate(lowered) if h in _ANSWER), None)
    return None if question is None or answer is None else (question, answer)


def _qa_columns(header: Sequence[str]) -> tuple[int | None, int, int | None] | None:
    """Title, content and questions columns of a QA sheet (content required), or None."""

    def column(start: str) -> int | None:
        return next((i for i, h in enumerate(header) if h.strip().startswith(start)), None)

    content = column(QA_CONTENT)
    return None if content is None else (column(QA_TITLE), content, column(QA_QUESTIONS))


# The file, sheet and row a refusal of one question-and-answer row names: its words' first holes.
RowPlace: TypeAlias = dict[str, str | int]


def _qa_record(columns: tuple[int | None, int, int | None], row: Sequence[str], where: RowPlace) -> Record | None:
    def cell(index: int | None) -> str:
        return row[index] if index is not None and index < len(row) else ""

    title_at, content_at, questions_at = columns
    content = cell(content_at)
    if not content:
        return None
    questions = tuple(dict.fromkeys(q.strip() for q in cell(questions_at).splitlines() if q.strip()))
    if len(questions) > MAX_QUESTIONS_PER_PARAGRAPH:
        raise DocumentRejected(
            said(
                "sheet_row_has_questions_paragraph_takes",
                **where,
                len_questions=len(questions),
                max_questions_per_paragraph=MAX_QUESTIONS_PER_PARAGRAPH,
            )
        )
    too_long = next((q for q in questions if len(q) > MAX_QUESTION_CHARS), None)
    if too_long is not None:
        raise DocumentRejected(
            said(
                "sheet_row_has_question_characters_question",
                **where,
                len_too_long=len(too_long),
                max_question_chars=MAX_QUESTION_CHARS,
            )
        )
    return Record(cell(title_at), content, questions)


def _row_text(header: Sequence[str], row: Sequence[str]) -> str:
    pairs = []
    for i, value in enumerate(row):
        if value:
            name = header[i] if i < len(header) and header[i] else f"第{i + 1}列"
            pairs.append(f"{name}: {value}")
    return "；".join(pairs)


def sheet_blocks(
    name: str, rows: Iterable[Sequence[object]], budget: int, filename: str, text_budget: TextBudget
) -> Iterator[Block]:
    """One sheet's rows as blocks, refusing once more than ``budget`` rows have come out; each
    row's cells are counted against ``text_budget`` as the row is read."""
    header: list[str] | None = None
    faq: tuple[int, int] | None = None
    qa: tuple[int | None, int, int | None] | None = None
    count = 0
    for number, raw in enumerate(rows, start=1):
        row = [_cell(v) for v in raw]
        text_budget.rows((row,))
        if not any(row):
            continue
        if header is None:
            header, qa = row, _qa_columns(row)
            faq = None if qa is not None else _faq_columns(row)
            if name:
                yield Heading(name, 2)
            continue
        count += 1
        if count > budget:
            raise DocumentRejected(
                said("has_more_rows_paragraphs_document_may", filename=f"{filename!r}", budget=budget)
            )
        if qa is not None:
            record = _qa_record(qa, row, {"filename": f"{filename!r}", "name_or_1": name or 1, "number": number})
            if record is not None:
                yield record
            continue
        if faq is not None:
            question, answer = (row[i] if i < len(row) else "" for i in faq)
            if question and answer:
                yield Record(question, answer)
                continue
        yield Text(_row_text(header, row))


def workbook_document(filename: str, data: bytes, limits: ParseLimits, text_budget: TextBudget) -> StructuredDocument:
    """An .xlsx or .xls workbook, every visible sheet in order, read by calamine (Rust, one pass)."""
    from python_calamine import CalamineError, CalamineWorkbook

    try:
        workbook = CalamineWorkbook.from_filelike(io.BytesIO(data))
        blocks: list[Block] = []
        for sheet_name in workbook.sheet_names:
            sheet = workbook.get_sheet_by_name(sheet_name)
            budget = limits.max_paragraphs - len(blocks)
            blocks.extend(sheet_blocks(sheet_name, sheet.iter_rows(), budget, filename, text_budget))
    except (CalamineError, ValueError, OSError) as exc:
        raise DocumentRejected(said("damaged_cannot_be_read_spreadsheet", filename=f"{filename!r}", exc=exc)) from exc
    return StructuredDocument(blocks=blocks)


def csv_document(filename: str, data: bytes, limits: ParseLimits, budget: TextBudget) -> StructuredDocument:
    """A CSV file (comma, semicolon or tab separated; UTF-8 or GB18030)."""
    text = decode_legacy(filename, data)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = csv.reader(io.StringIO(text), dialect)
    try:
        blocks = list(sheet_blocks(PurePosixPath(filename).stem, rows, limits.max_paragraphs, filename, budget))
    except csv.Error as exc:
        raise DocumentRejected(said("not_valid_csv", filename=f"{filename!r}", exc=exc)) from exc
    return StructuredDocument(blocks=blocks)
