"""The limits a file meets before any parsing library reads it (``preflight``) and while it is
read and split: cells of a sheet grid, inflated streams and parts, pages and slides, characters,
lines and paragraphs. Each hostile file here is refused with a sentence naming the limit, and
the library (or the splitting) that would have been hurt is shown never to run, or to stop where
the limit was passed."""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest

from services.retrieval.ingestion import splitter
from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, parse, parse_document
from services.retrieval.ingestion.parsing.document import TextBudget
from services.retrieval.ingestion.parsing.preflight import preflight
from services.retrieval.ingestion.splitter import SplitParagraph
from tests.fixtures import documents, hostile

LIMITS = ParseLimits()
MiB = 1 << 20


@pytest.fixture
def calamine_never_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import python_calamine

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("calamine was asked to read a workbook that preflight should have refused")

    monkeypatch.setattr(python_calamine.CalamineWorkbook, "from_filelike", refuse)


@pytest.fixture
def pdfplumber_never_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import pdfplumber

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("pdfplumber was asked to open a PDF that preflight should have refused")

    monkeypatch.setattr(pdfplumber, "open", refuse)


@pytest.mark.usefixtures("calamine_never_runs")
@pytest.mark.parametrize("make", [hostile.xlsx_far_corner_cell, hostile.xlsx_hundred_by_200k])
def test_b1_a_workbook_whose_cells_span_a_huge_grid_is_refused_before_calamine_reads_it(make) -> None:
    data = make()
    assert len(data) < 8 * 1024, "the attack is a few kilobytes"
    with pytest.raises(DocumentRejected, match=r"spans more than 2,000,000 cells .*KB_PARSE_MAX_CELLS"):
        parse_document("库存.xlsx", data, LIMITS)


@pytest.mark.usefixtures("calamine_never_runs")
def test_cells_written_without_references_are_counted_where_readers_place_them() -> None:
    cells = '<c t="inlineStr"><is><t>x</t></is></c>' * 300
    data = hostile._xlsx_with_sheet_xml(lambda xml: xml.replace("</sheetData>", f"<row>{cells}</row></sheetData>"))
    with pytest.raises(DocumentRejected, match="spans more than 500 cells"):
        parse_document("宽表.xlsx", data, ParseLimits(max_cells=1000 // 2))


def test_a_workbook_within_the_cell_limit_still_parses() -> None:
    parsed = parse_document("库存.xlsx", documents.spreadsheet_rows(500), ParseLimits(max_cells=501 * 4))
    assert len(parsed.paragraphs) == 500


def test_b5_an_excel_nul_escape_leaves_no_nul_in_the_paragraphs() -> None:
    parsed = parse_document("价格.xlsx", hostile.xlsx_nul_cell(), LIMITS)
    text = "\n".join(p.title + p.content for p in parsed.paragraphs)
    assert "\x00" not in text
    assert "ZX-9" in text and "990元整" in text, text


@pytest.mark.usefixtures("pdfplumber_never_runs")
def test_b2_a_pdf_stream_inflating_to_a_gibibyte_is_refused_before_pdfminer_decodes_it() -> None:
    data = hostile.pdf_inflating_stream()
    assert len(data) < 2 * MiB
    with pytest.raises(DocumentRejected, match=r"unpacks to more than 64 MiB.*KB_PARSE_MAX_STREAM_MB"):
        parse_document("报告.pdf", data, LIMITS)


def test_streams_together_are_bounded_by_the_file_limit() -> None:
    data = hostile.pdf_pages(3)  # three small streams: fine alone, too much together for a tiny limit
    with pytest.raises(DocumentRejected, match="unpacks to more than 0 MiB of content"):
        preflight("pdf", "报告.pdf", data, ParseLimits(archive_max_bytes=40, max_stream_bytes=MiB))


def test_image_streams_are_not_counted_the_text_parser_never_decodes_them() -> None:
    image = hostile._stream(bytes(3 * MiB), b"/Type /XObject /Subtype /Image /Width 1024 /Height 1024 ")
    data = hostile._pdf([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>", image])
    preflight("pdf", "图.pdf", data, ParseLimits(max_stream_bytes=MiB))  # no refusal


@pytest.mark.usefixtures("pdfplumber_never_runs")
def test_an_honest_pdf_passes_preflight() -> None:
    preflight("pdf", "手册.pdf", documents.chinese_pdf(), LIMITS)
    preflight("pdf", "报告.pdf", documents.big_pdf(30), LIMITS)


def test_b9_a_pdf_declaring_more_pages_than_the_limit_is_refused_before_its_pages_are_built() -> None:
    with pytest.raises(DocumentRejected, match=r"has 50 pages; a PDF may have at most 10 .*KB_PARSE_MAX_PAGES"):
        parse_document("长文.pdf", hostile.pdf_pages(50), ParseLimits(max_pages=10))


def test_a_page_tree_whose_count_lies_is_refused_once_its_pages_are_counted() -> None:
    with pytest.raises(DocumentRejected, match="has more than 10 pages"):
        parse_document("长文.pdf", hostile.pdf_pages(12, declared=1), ParseLimits(max_pages=10))


def test_a_pdf_at_the_page_limit_parses() -> None:
    parsed = parse_document("短文.pdf", hostile.pdf_pages(10), ParseLimits(max_pages=10))
    assert any("Inspection records every shift" in p.content for p in parsed.paragraphs)


def test_a_presentation_with_more_slides_than_the_limit_is_refused() -> None:
    with pytest.raises(DocumentRejected, match=r"has 30 slides; a presentation may have at most 20"):
        preflight("pptx", "讲义.pptx", hostile.pptx_many_slides(30), ParseLimits(max_pages=20))


def test_an_office_part_past_the_ratio_is_a_bomb_even_under_the_size_limits() -> None:
    data = hostile.docx_inflating_part(8)
    part = zipfile.ZipFile(io.BytesIO(data)).getinfo("word/document.xml")
    assert part.file_size < LIMITS.max_stream_bytes and part.file_size > 200 * part.compress_size
    with pytest.raises(DocumentRejected, match=r"200 times its packed size.*KB_ARCHIVE_MAX_RATIO"):
        parse_document("说明.docx", data, LIMITS)


def test_an_office_part_past_the_stream_limit_is_refused_whatever_its_ratio() -> None:
    with pytest.raises(DocumentRejected, match=r"unpacks to more than 4 MiB.*KB_PARSE_MAX_STREAM_MB"):
        parse_document(
            "说明.docx", hostile.docx_inflating_part(8), ParseLimits(max_ratio=100_000, max_stream_bytes=4 * MiB)
        )


def test_a_document_making_more_text_than_the_limit_is_refused() -> None:
    text = "\n\n".join(f"第{i}条：值班人员每两小时巡查一次并记录。" for i in range(2000)).encode()
    with pytest.raises(
        DocumentRejected,
        match=r"more than 10,000 characters of text, the most one document may have.*KB_PARSE_MAX_CHARS",
    ):
        parse_document("规定.md", text, ParseLimits(max_chars=10_000))


@pytest.fixture
def splitting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many paragraphs the splitter made before the parse ended (the list's one number)."""
    made = [0]
    real = splitter.iter_paragraphs

    def counted(*args: Any, **kwargs: Any) -> Iterator[SplitParagraph]:
        for paragraph in real(*args, **kwargs):
            made[0] += 1
            yield paragraph

    monkeypatch.setattr(parse, "iter_paragraphs", counted)  # as ``parse.finish`` finds it
    return made


def test_a_fifty_mib_line_is_refused_at_the_character_limit_before_any_of_it_is_split(splitting: list[int]) -> None:
    started = time.monotonic()
    with pytest.raises(
        DocumentRejected, match=r"'一行.txt' has more than 20,000,000 characters of text.*KB_PARSE_MAX_CHARS"
    ):
        parse_document("一行.txt", hostile.txt_one_long_line(), LIMITS)
    assert splitting == [0], "refused as it was read, not after splitting"
    assert time.monotonic() - started < 10, "refused at once (it took minutes to split)"


def test_paragraphs_are_counted_as_the_splitter_makes_them_and_the_one_past_the_limit_ends_it(
    splitting: list[int],
) -> None:
    text = "\n\n".join(f"第{i}条：值班人员每两小时巡查一次并记录。" for i in range(5000)).encode()
    with pytest.raises(DocumentRejected, match=r"makes more than 100 paragraphs, .*KB_INGEST_MAX_PARAGRAPHS"):
        parse_document("规定.md", text, ParseLimits(max_paragraphs=100))
    assert splitting == [101], "the splitting stopped at the first paragraph past the limit, not at 5000"


def test_a_file_of_nothing_but_headings_is_refused_at_the_line_limit_before_its_lines_become_blocks() -> None:
    data = b"# a\n" * 5000
    with pytest.raises(DocumentRejected, match=r"has more than 1,000 lines of text, .*KB_PARSE_MAX_LINES"):
        parse_document("标题.md", data, ParseLimits(max_lines=1000))
    assert parse_document("标题.md", data + b"\n\ntext", ParseLimits(max_lines=6000)).paragraphs


def test_a_pdf_is_refused_at_the_page_where_its_text_passes_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from services.retrieval.ingestion.parsing import pdf

    read: list[int] = []
    real = pdf._page_items

    def counted(page: Any, number: int, budget: TextBudget) -> Any:
        read.append(number)
        return real(page, number, budget)

    monkeypatch.setattr(pdf, "_page_items", counted)
    with pytest.raises(DocumentRejected, match=r"more than 10,000 characters of text"):
        parse_document("报告.pdf", documents.big_pdf(30), ParseLimits(max_chars=10_000))
    assert 0 < len(read) < 30, f"the pages after the limit were never read ({len(read)} read)"


def test_a_csv_is_refused_at_the_row_where_its_lines_pass_the_limit() -> None:
    data = ("产品,价格\n" + "".join(f"XL-{i},{i}元\n" for i in range(3000))).encode()
    with pytest.raises(DocumentRejected, match=r"more than 1,000 lines of text"):
        parse_document("价格.csv", data, ParseLimits(max_lines=1000))


def test_a_document_just_under_the_default_limits_is_split_whole_and_in_order() -> None:
    """Eleven MiB of words on one line (no sentence end: cut at the maximum length, which falls
    between words here): 19,224 paragraphs at the defaults, every word kept, in order."""
    data = hostile.txt_one_long_line(11)
    parsed = parse_document("一行.txt", data, LIMITS)
    assert len(parsed.paragraphs) == 19_224 and all(len(p.content) <= 600 for p in parsed.paragraphs)
    assert " ".join(p.content for p in parsed.paragraphs) == data.decode().strip()
