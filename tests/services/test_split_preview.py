"""The split preview through a real retrieval server: for a Word file, a workbook, a PDF, a
Markdown file and a web page, importing with the rules a preview was made with gives exactly
the paragraphs previewed; the rules stay with the document (a re-upload without rules and a web
sync cut it alike); rules out of bounds and a separator that cuts nothing are told in words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.rpc.stubs import RetrievalStubs
from tests.eventually import eventually
from tests.fixtures import documents
from tests.grpc_status import status_of
from tests.services.conftest import LoopbackNode
from tests.web_site import Site, page_html, serve_site

READY = pb.DOCUMENT_STATUS_READY
SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kb" / "docs" / "xinglan_leave_policy.md"
RULES = pb.SplitRules(max_length=80, separators=["。"], overlap=10, title_levels=2, keep_tables=True)
FILES = {
    "手册.docx": documents.docx_with_headings_and_table(),
    "价格表.xlsx": documents.xlsx_price_list(),
    "手册.pdf": documents.chinese_pdf(),
    "休假.md": SAMPLE.read_bytes(),
    "差旅.html": documents.html_page_with_nav().encode(),
}


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    with serve_site({"/notice.html": page_html(1)}) as served:
        yield served


async def dataset(stub: RetrievalStubs, unique: str) -> str:
    created = await stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"split-{unique}"))
    return str(created.dataset.id)


async def ready(stub: RetrievalStubs, dataset_id: str, document_id: str) -> pb.Document:
    return await eventually(
        lambda: stub.documents.GetDocument(pb.GetDocumentRequest(dataset_id=dataset_id, document_id=document_id)),
        lambda d: d.status == READY and d.progress_total == 0 and d.paragraph_count > 0,
        timeout=60,
        interval=0.05,
        what="the document ingested",
    )


async def stored(stub: RetrievalStubs, document: pb.Document) -> list[tuple[str, str]]:
    listed = await stub.paragraphs.ListParagraphs(
        pb.ListParagraphsRequest(dataset_id=document.dataset_id, document_id=document.id, page=1, page_size=200)
    )
    return [(p.title, p.content) for p in listed.paragraphs]


@pytest.mark.parametrize("filename", list(FILES))
async def test_importing_with_the_previewed_rules_makes_exactly_the_previewed_paragraphs(
    loopback_node: LoopbackNode, unique: str, filename: str
) -> None:
    stub = loopback_node.stub
    file = pb.FileContent(filename=filename, data=FILES[filename])
    preview = await stub.documents.PreviewSplit(pb.PreviewSplitRequest(file=file, split_rules=RULES))
    default = await stub.documents.PreviewSplit(pb.PreviewSplitRequest(file=file))
    assert preview.total == len(preview.paragraphs) > 0
    assert all(len(p.content) <= 80 or p.content.startswith("|") for p in preview.paragraphs)

    dataset_id = await dataset(stub, unique)
    reply = await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=file, split_rules=RULES)
    )
    document = await ready(stub, dataset_id, reply.documents[0].id)

    assert await stored(stub, document) == [(p.title, p.content) for p in preview.paragraphs]
    if filename.endswith((".md", ".pdf")):  # prose long enough for the rules to change the cut
        assert [(p.title, p.content) for p in default.paragraphs] != [(p.title, p.content) for p in preview.paragraphs]


async def test_a_document_keeps_its_rules_for_its_next_versions(
    loopback_node: LoopbackNode, site: tuple[Site, str], unique: str
) -> None:
    stub = loopback_node.stub
    web, base = site
    dataset_id = await dataset(stub, unique)
    one_sentence_each = pb.SplitRules(separators=["。", "："])
    page = await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=base + "/notice.html", split_rules=one_sentence_each)
    )
    first = await ready(stub, dataset_id, page.documents[0].id)
    assert len(await stored(stub, first)) == 3

    web.pages["/notice.html"] = page_html(1, revised=True)
    synced = await stub.documents.SyncDocuments(pb.SyncDocumentsRequest(dataset_id=dataset_id))
    assert [s.outcome for s in synced.documents] == [pb.SYNC_OUTCOME_QUEUED]
    await eventually(
        lambda: stored(stub, first),
        lambda paragraphs: any("视为放弃" in content for _, content in paragraphs),
        timeout=60,
        what="the synced page's new version",
    )
    contents = [content for _, content in await stored(stub, first)]
    assert len(contents) == 3 and contents[-1] == "逾期不办理的，视为放弃。", "cut by the same rules"

    file = pb.FileContent(filename="休假.md", data=SAMPLE.read_bytes())
    sentences = pb.SplitRules(separators=["。"])
    uploaded = await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=file, split_rules=sentences)
    )
    cut = await stored(stub, await ready(stub, dataset_id, uploaded.documents[0].id))
    edited = SAMPLE.read_bytes() + "\n\n补充规定：本办法由人力资源部负责解释。\n".encode()
    again = await stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=pb.FileContent(filename="休假.md", data=edited))
    )
    await eventually(
        lambda: stored(stub, again.documents[0]),
        lambda paragraphs: len(paragraphs) == len(cut) + 1,
        timeout=60,
        what="the re-upload cut by the rules the document keeps",
    )


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        (pb.SplitRules(max_length=10**9), "max_length must be between 50 and 10000"),
        (pb.SplitRules(max_length=20), "max_length must be between 50 and 10000"),
        (pb.SplitRules(separators=[""]), "a separator must have 1 to 20 characters"),
        (pb.SplitRules(separators=["  "]), "only spaces"),
    ],
)
async def test_rules_out_of_bounds_are_refused_in_words(
    loopback_node: LoopbackNode, rules: pb.SplitRules, said: str
) -> None:
    file = pb.FileContent(filename="休假.md", data=SAMPLE.read_bytes())
    code, message = await status_of(
        loopback_node.stub.documents.PreviewSplit(pb.PreviewSplitRequest(file=file, split_rules=rules))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and said in message


async def test_a_separator_that_cuts_nothing_is_named(loopback_node: LoopbackNode) -> None:
    file = pb.FileContent(filename="休假.md", data=SAMPLE.read_bytes())
    rules = pb.SplitRules(separators=["。", "§§"])
    preview = await loopback_node.stub.documents.PreviewSplit(pb.PreviewSplitRequest(file=file, split_rules=rules))
    assert list(preview.unused_separators) == ["§§"]
