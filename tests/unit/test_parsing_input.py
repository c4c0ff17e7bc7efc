"""Bad input: lying names, unsupported and empty files, zip bombs and hostile archive paths."""

from __future__ import annotations

import time

import pytest

from kbcore.document_types import SUPPORTED_SUFFIXES, source_type_of_name
from services.retrieval.ingestion.parsing import DocumentRejected, ParseLimits, expand_archive, parse_document, sniff
from tests.fixtures import documents

LIMITS = ParseLimits(archive_max_files=20, archive_max_bytes=32 << 20)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)


def test_the_type_list_is_shared_and_goes_by_suffix() -> None:
    assert ".pdf" in SUPPORTED_SUFFIXES and ".zip" in SUPPORTED_SUFFIXES
    assert source_type_of_name("C:\\docs\\Report.PDF") == "pdf"
    assert source_type_of_name("notes.markdown") == "md"
    assert source_type_of_name("photo.png") is None


@pytest.mark.parametrize(
    ("name", "data", "found"),
    [
        ("manual.pdf", PNG, "a PNG image"),
        ("manual.pdf", documents.zip_of({"a.txt": b"x"}), "a zip archive"),
        ("manual.docx", documents.chinese_pdf(), "a PDF"),
        ("prices.xlsx", documents.docx_with_headings_and_table(), r"a Word document \(\.docx\)"),
        ("notes.txt", documents.chinese_pdf(), "a PDF"),
    ],
)
def test_a_name_that_lies_about_the_content_is_refused(name, data, found) -> None:
    with pytest.raises(DocumentRejected, match=f"its content is {found}"):
        sniff(name, data)


def test_an_xls_that_is_really_an_xlsx_is_read_as_one() -> None:
    assert sniff("old.xls", documents.xlsx_price_list()) == "xlsx"


def test_unsupported_and_empty_files_are_refused_with_the_reason() -> None:
    with pytest.raises(DocumentRejected, match=r"'photo\.png' is not a supported type; supported types: .*\.pdf"):
        parse_document("photo.png", PNG, LIMITS)
    with pytest.raises(DocumentRejected, match="is empty"):
        parse_document("empty.pdf", b"", LIMITS)
    with pytest.raises(DocumentRejected, match="contains no text"):
        parse_document("heading-only.md", "# 标题\n\n## 小节\n".encode(), LIMITS)


def test_an_archive_gives_its_supported_files_and_skips_the_rest_safely() -> None:
    data = documents.zip_of(
        {
            "手册/价格表.csv": documents.csv_rows(),
            "readme.md": "# 说明\n\n正文。".encode(),
            "../escape.md": b"# evil",
            "/abs/evil.md": b"# evil",
            "inner.zip": documents.zip_of({"a.md": b"# nested"}),
            "photo.png": PNG,
            "__MACOSX/._readme.md": b"meta",
        }
    )
    assert expand_archive("batch.zip", data, LIMITS) == [
        ("手册/价格表.csv", documents.csv_rows()),
        ("readme.md", "# 说明\n\n正文。".encode()),
    ]


@pytest.mark.parametrize("lie", [False, True])
def test_a_zip_bomb_stops_at_the_byte_limit_even_when_its_headers_lie(lie) -> None:
    bomb = documents.zip_bomb(member_mib=16, members=4, lie_about_size=lie)
    started = time.perf_counter()
    # Lying headers: Python's zipfile never inflates past a declared size, so the member fails its checksum.
    with pytest.raises(DocumentRejected, match=r"unpacks to .*32 MiB|zip bomb|damaged"):
        expand_archive("bomb.zip", bomb, LIMITS)
    assert time.perf_counter() - started < 5


def test_too_many_files_refuse_the_whole_archive() -> None:
    with pytest.raises(DocumentRejected, match="holds 21 documents; one archive may hold at most 20"):
        expand_archive("many.zip", documents.zip_of_many(21), LIMITS)


def test_an_office_file_that_is_a_bomb_is_refused_before_a_library_opens_it() -> None:
    bomb = documents.zip_bomb(member_mib=40, members=1)
    docx_bomb = _with_word_part(bomb)
    with pytest.raises(DocumentRejected, match="zip bomb"):
        parse_document("bomb.docx", docx_bomb, LIMITS)


def _with_word_part(bomb: bytes) -> bytes:
    """The bomb's members plus a word/document.xml, so sniffing takes it for a Word document."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(bomb)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        target.writestr("word/document.xml", b"<w:document/>")
        for info in source.infolist():
            target.writestr(info, source.read(info))
    return out.getvalue()


def test_a_zip_is_not_parsed_as_one_document() -> None:
    with pytest.raises(DocumentRejected, match="archive"):
        parse_document("batch.zip", documents.zip_of({"a.md": b"# a\n\ntext"}), LIMITS)
