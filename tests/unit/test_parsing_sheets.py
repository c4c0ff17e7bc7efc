"""Spreadsheets: rows carry their column names, FAQ sheets become question-titled records, size is bounded."""

from __future__ import annotations

import time

import pytest

from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, parse_document
from tests.fixtures import documents

LIMITS = ParseLimits()
PRICE_ROW = "产品: 星澜净水器XL-100；规格: 400G；价格: 1280元"


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("价格表.xlsx", documents.xlsx_price_list),
        ("价格表.xls", documents.xls_sheet),
        ("价格表.csv", documents.csv_rows),
    ],
)
def test_each_row_is_a_paragraph_carrying_its_header_names(name, make) -> None:
    parsed = parse_document(name, make(), LIMITS)
    assert [p.content for p in parsed.paragraphs] == [PRICE_ROW, "产品: PP棉滤芯；规格: 10寸；价格: 45元"]
    assert all(p.title == "价格表" for p in parsed.paragraphs)


def test_a_question_answer_sheet_imports_as_faq_pairs() -> None:
    parsed = parse_document("faq.xlsx", documents.xlsx_faq(), LIMITS)
    assert [(p.title, p.content) for p in parsed.paragraphs] == [(q, a) for q, a in documents.FAQ_ROWS[1:]]


def test_a_qa_sheet_makes_paragraphs_with_their_questions_attached() -> None:
    parsed = parse_document("qa.xlsx", documents.xlsx_qa(), LIMITS)
    assert [(p.title, p.content, p.questions) for p in parsed.paragraphs] == [
        ("护理假", "男方享受护理假十五天。", ("当爹能歇几天？", "陪产假多久？")),  # a repeated line once
        ("假期", "婚假三天。", ()),  # no title of its own: the sheet's
    ]


@pytest.mark.parametrize(
    ("questions", "words"),
    [("\n".join(f"问法{i}" for i in range(101)), "101 questions"), ("问" * 257, "257 characters")],
)
def test_a_qa_row_with_too_many_or_too_long_questions_is_refused_naming_it(questions: str, words: str) -> None:
    rows = [documents.QA_HEADER, ("护理假", "十五天。", "几天？"), ("婚假", "三天。", questions)]
    with pytest.raises(DocumentRejected) as refused:
        parse_document("qa.xlsx", documents.xlsx_qa(rows), LIMITS)
    assert words in str(refused.value) and "row 3" in str(refused.value)


def test_a_gbk_csv_from_chinese_excel_is_read() -> None:
    parsed = parse_document("价格表.csv", documents.csv_rows().decode("utf-8-sig").encode("gbk"), LIMITS)
    assert parsed.paragraphs[0].content == PRICE_ROW


def test_a_100000_row_sheet_is_refused_at_the_paragraph_limit_quickly() -> None:
    data = documents.spreadsheet_rows(100_000)
    started = time.perf_counter()
    with pytest.raises(DocumentRejected, match=r"more rows than the 20000 paragraphs.*KB_INGEST_MAX_PARAGRAPHS"):
        parse_document("库存.xlsx", data, ParseLimits(max_paragraphs=20_000))
    assert time.perf_counter() - started < 10


def test_a_sheet_within_the_limit_is_taken_whole() -> None:
    parsed = parse_document("库存.xlsx", documents.spreadsheet_rows(500), LIMITS)
    assert len(parsed.paragraphs) == 500
    assert parsed.paragraphs[-1].content == "编号: 500；名称: 零件500；数量: 15"


def test_a_corrupt_workbook_is_refused_as_damaged() -> None:
    with pytest.raises(DocumentRejected, match="damaged"):
        parse_document("bad.xlsx", documents.zip_of({"xl/workbook.xml": b"<oops", "a.xml": b""}), LIMITS)
