"""One entry point for every uploaded file: check what it is and its bounds, parse it, split it, bound it;
and one for a web page's HTML (``parse_html``). Each format's reader only builds the structured form,
and this module finishes every one alike (``finish``).

The text is counted against the document's limits while it is read and split (``TextBudget``), so
a file past one is refused where it passes it. Run inside the parsing child process
(``services.retrieval.ingestion.parsing.confined.sandbox``), never in a service.
"""

from __future__ import annotations

from pathlib import PurePosixPath, PureWindowsPath

from kbcore.text.storable import storable_text
from kbcore.words.said import said
from services.retrieval.ingestion.parsing.document import (
    DocumentRejected,
    ParsedDocument,
    ParseLimits,
    TextBudget,
    decode_legacy,
)
from services.retrieval.ingestion.parsing.preflight import preflight
from services.retrieval.ingestion.parsing.sniff import sniff
from services.retrieval.ingestion.split_rules import DEFAULT_RULES, SplitRules
from services.retrieval.ingestion.splitter import (
    Heading,
    SplitParagraph,
    StructuredDocument,
    Text,
    UnsupportedDocument,
    decode_text,
    iter_paragraphs,
    markdown_blocks,
)


def _stem(filename: str) -> str:
    return PurePosixPath(PureWindowsPath(filename).name).stem


def _storable(paragraph: SplitParagraph) -> SplitParagraph:
    """A paragraph without characters no store can hold (a cell written as ``_x0000_`` is a NUL)."""
    questions = tuple(storable_text(q) for q in paragraph.questions)
    return SplitParagraph(storable_text(paragraph.title), storable_text(paragraph.content), questions)


def finish(
    filename: str,
    document: StructuredDocument,
    budget: TextBudget,
    *,
    fallback_title: str = "",
    rules: SplitRules = DEFAULT_RULES,
) -> ParsedDocument:
    """Split the structured form by ``rules``, counting each paragraph against ``budget`` as it is
    made, and refuse an empty result, with the reason."""
    top = next((b.text for b in document.blocks if isinstance(b, Heading) and b.level == 1), "")
    title = storable_text(document.title or top or fallback_title)
    paragraphs: list[SplitParagraph] = []
    for paragraph in iter_paragraphs(document.blocks, document_title=document.title or top, rules=rules):
        kept = _storable(paragraph)
        if kept.content.strip():
            budget.paragraph()
            paragraphs.append(kept)
    if not paragraphs:
        raise DocumentRejected(said("contains_no_text", filename=f"{filename!r}"))
    texts = [b.text for b in document.blocks if isinstance(b, Text)]
    unused = tuple(s for s in rules.separators if not any(s in text for text in texts))
    return ParsedDocument(title=title, paragraphs=paragraphs, unused_separators=unused)


def _markdown_document(filename: str, data: bytes, budget: TextBudget) -> StructuredDocument:
    """Markdown or text; the file must be UTF-8, as the Markdown path always required. Its whole
    text is counted at once, before any of it is split."""
    try:
        text = decode_text(filename, data)
    except UnsupportedDocument as exc:
        raise DocumentRejected(exc.words) from exc
    return StructuredDocument(blocks=markdown_blocks(budget.read(text)))


def _structured(kind: str, filename: str, data: bytes, limits: ParseLimits, budget: TextBudget) -> StructuredDocument:
    """The parser for one source type; the libraries are imported only when their format arrives."""
    if kind in ("md", "txt"):
        return _markdown_document(filename, data, budget)
    if kind == "pdf":
        from services.retrieval.ingestion.parsing.pdf import pdf_document

        return pdf_document(filename, data, limits, budget)
    if kind == "docx":
        from services.retrieval.ingestion.parsing.word import word_document

        return word_document(filename, data, budget)
    if kind in ("xlsx", "xls"):
        from services.retrieval.ingestion.parsing.sheets import workbook_document

        return workbook_document(filename, data, limits, budget)
    if kind == "csv":
        from services.retrieval.ingestion.parsing.sheets import csv_document

        return csv_document(filename, data, limits, budget)
    if kind == "html":
        from services.retrieval.ingestion.parsing.web import html_document

        return html_document(decode_legacy(filename, data), budget)
    if kind == "pptx":
        from services.retrieval.ingestion.parsing.slides import slides_document

        return slides_document(filename, data, budget)
    raise DocumentRejected(said("archive_files_are_taken_one_one", filename=f"{filename!r}"))


def parse_document(
    filename: str, data: bytes, limits: ParseLimits, rules: SplitRules = DEFAULT_RULES
) -> ParsedDocument:
    """An uploaded file as a title and titled paragraphs, cut by ``rules``; CPU-bound, so
    callers run it in a thread.

    Every refusal is a DocumentRejected whose message names the file and the problem.
    """
    kind = sniff(filename, data)
    preflight(kind, filename, data, limits)
    budget = TextBudget(filename, limits)
    document = _structured(kind, filename, data, limits, budget)
    return finish(filename, document, budget, fallback_title=_stem(filename), rules=rules)


def parse_html(html: str, *, url: str | None = None, limits: ParseLimits | None = None) -> ParsedDocument:
    """A web page (fetched by URL or uploaded) as titled paragraphs of its main content."""
    from services.retrieval.ingestion.parsing.web import html_document

    name = url or "the web page"
    budget = TextBudget(name, limits or ParseLimits())
    return finish(name, html_document(html, budget), budget, fallback_title=url or "")
