"""Real documents in, through a real retrieval server on its own vector store: a web page served
by a local HTTP server is fetched, keeps its article and loses its navigation and footer; a page
that answers 404 or sits on a loopback address the operator did not allow is refused at once,
with nothing created; a value inside a PDF table cell is found by a hit test; Word and Excel
files ingest with the titles their headings and sheets give."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import pytest

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.rpc.bootstrap import RunningServer
from kbcore.rpc.client import open_channel
from kbcore.rpc.service_credential import service_credential
from kbcore.rpc.stubs import RetrievalStubs
from kbcore.settings import Settings
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.server import RetrievalDeps, create_server
from services.retrieval.store.base import VectorStore
from services.retrieval.store.factory import open_vector_store
from tests.eventually import eventually
from tests.fixtures.documents import (
    DOCX_TABLE_VALUE,
    FOOTER_TEXT,
    NAV_TEXT,
    PDF_TABLE_VALUE,
    chinese_pdf,
    docx_with_headings_and_table,
    html_page_with_nav,
    xlsx_price_list,
)
from tests.grpc_status import status_of

KEYWORD = common_pb2.SearchSettings(search_mode=common_pb2.SEARCH_MODE_KEYWORD, top_n=20)
READY, FAILED = pb.DOCUMENT_STATUS_READY, pb.DOCUMENT_STATUS_FAILED
ARTICLE_TEXT = "一线城市住宿费每晚不超过600元"


class _Pages(BaseHTTPRequestHandler):
    """``/travel.html`` is the intranet page; every other path answers 404."""

    def do_GET(self) -> None:
        if self.path == "/travel.html":
            body = html_page_with_nav().encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
        else:
            body = b"<html><body>not here</body></html>"
            self.send_response(404)
            self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    """The base URL of a local web server (127.0.0.1, port 0) in a thread of its own."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, name="test web server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
async def own_store(tmp_path: Path) -> AsyncIterator[VectorStore]:
    """A store of the test's own, so only the server started here works on these jobs."""
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=tmp_path / "edge", dimension=384)
    yield store
    await store.close()


async def _server(
    settings: Settings, sessions, store: VectorStore, embedder: Embedder, model, fetch_allow_hosts: str = ""
) -> AsyncIterator[RetrievalStubs]:
    quick = dataclasses.replace(settings, ingest_poll_seconds=0.1, fetch_allow_hosts=fetch_allow_hosts)
    server: RunningServer = await create_server(quick, RetrievalDeps(sessions, store, embedder, model), port=0)
    channel = open_channel(f"127.0.0.1:{server.port}", service_credential(settings))
    try:
        yield RetrievalStubs.of(channel)
    finally:
        await channel.close()
        await server.stop(grace=0)


@pytest.fixture
async def allowing(settings, sessions, own_store, embedder, offline_model) -> AsyncIterator[RetrievalStubs]:
    """A retrieval server whose operator allowed fetching from 127.0.0.1."""
    async for stub in _server(settings, sessions, own_store, embedder, offline_model, fetch_allow_hosts="127.0.0.1"):
        yield stub


@pytest.fixture
async def default(settings, sessions, own_store, embedder, offline_model) -> AsyncIterator[RetrievalStubs]:
    """A retrieval server with the default fetch policy: public addresses only."""
    assert settings.fetch_allow_hosts == ""
    async for stub in _server(settings, sessions, own_store, embedder, offline_model):
        yield stub


async def dataset(stub: RetrievalStubs, unique: str) -> str:
    created = await stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"web-{unique}"))
    return str(created.dataset.id)


async def ingested(
    stub: RetrievalStubs, dataset_id: str, *, url: str = "", file: pb.FileContent | None = None
) -> pb.Document:
    """Submit one document (a page or a file) and wait until its job has ended; it must be ready."""
    request = pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=url) if url else None
    request = request or pb.SubmitDocumentsRequest(dataset_id=dataset_id, file=file)
    reply = await stub.documents.SubmitDocuments(request)
    [queued] = reply.documents
    get = pb.GetDocumentRequest(dataset_id=dataset_id, document_id=queued.id)
    document = await eventually(
        lambda: stub.documents.GetDocument(get),
        lambda d: d.status in (READY, FAILED),
        timeout=60,
        interval=0.05,
        what="the page's ingestion",
    )
    assert (document.status, document.error) == (READY, ""), document
    assert document.paragraph_count > 0
    return document  # type: ignore[no-any-return]


async def paragraphs(stub: RetrievalStubs, document: pb.Document) -> list[pb.ManagedParagraph]:
    listed = await stub.paragraphs.ListParagraphs(
        pb.ListParagraphsRequest(dataset_id=document.dataset_id, document_id=document.id, page=1, page_size=200)
    )
    assert listed.total == document.paragraph_count == len(listed.paragraphs)
    return list(listed.paragraphs)


async def test_a_web_page_ingests_its_article_without_navigation_or_footer(allowing, web, unique) -> None:
    dataset_id = await dataset(allowing, unique)
    document = await ingested(allowing, dataset_id, url=f"{web}/travel.html")
    assert document.source_type == "url"
    found = await paragraphs(allowing, document)
    text = "\n".join(f"{p.title}\n{p.content}" for p in found)
    assert any(ARTICLE_TEXT in p.content and p.title == "住宿标准" for p in found), text
    assert "报销须在返回后十个工作日内提交" in text
    for word in [*NAV_TEXT.split(), FOOTER_TEXT, "相关链接", "北京市海淀区星澜路1号"]:
        assert word not in text, f"{word!r} is page furniture, not article: {text}"


async def test_a_page_answering_404_is_refused_and_nothing_is_created(allowing, web, unique) -> None:
    dataset_id = await dataset(allowing, unique)
    code, message = await status_of(
        allowing.documents.SubmitDocuments(pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=f"{web}/gone.html"))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "404" in message, message
    listed = await allowing.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset_id))
    assert list(listed.documents) == []


async def test_a_loopback_page_is_refused_unless_the_operator_allows_it(default, web, unique) -> None:
    dataset_id = await dataset(default, unique)
    code, message = await status_of(
        default.documents.SubmitDocuments(pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=f"{web}/travel.html"))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "KB_FETCH_ALLOW_HOSTS" in message, message
    listed = await default.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset_id))
    assert list(listed.documents) == []


async def test_a_hit_test_finds_a_value_inside_a_pdf_table_cell(allowing, unique) -> None:
    dataset_id = await dataset(allowing, unique)
    document = await ingested(allowing, dataset_id, file=pb.FileContent(filename="净水器手册.pdf", data=chinese_pdf()))
    assert document.source_type == "pdf"
    reply = await allowing.search.Search(
        pb.SearchRequest(dataset_ids=[dataset_id], query=PDF_TABLE_VALUE, search=KEYWORD)
    )
    assert reply.paragraphs, "the table cell's value is not found"
    top = reply.paragraphs[0]
    assert PDF_TABLE_VALUE in top.content and "XL-200" in top.content and "|" in top.content, top
    assert top.title == "二、价格与保修"


async def test_word_and_excel_files_ingest_with_the_titles_of_their_headings_and_sheets(allowing, unique) -> None:
    dataset_id = await dataset(allowing, unique)
    word = await ingested(
        allowing, dataset_id, file=pb.FileContent(filename="扫地机器人.docx", data=docx_with_headings_and_table())
    )
    assert word.source_type == "docx"
    found = await paragraphs(allowing, word)
    assert {p.title for p in found} == {"第一章 产品介绍", "第一章 产品介绍 / 充电方法", "第二章 保养"}, found
    assert [p.title for p in found if "指示灯闪烁" in p.content] == ["第一章 产品介绍 / 充电方法"]
    table = [p for p in found if DOCX_TABLE_VALUE in p.content]
    assert [p.title for p in table] == ["第二章 保养"] and "| 滤网 |" in table[0].content

    sheet = await ingested(allowing, dataset_id, file=pb.FileContent(filename="价格表.xlsx", data=xlsx_price_list()))
    assert sheet.source_type == "xlsx"
    rows = await paragraphs(allowing, sheet)
    assert [p.title for p in rows] == ["价格表", "价格表"]
    assert rows[0].content == "产品: 星澜净水器XL-100；规格: 400G；价格: 1280元"
    reply = await allowing.search.Search(
        pb.SearchRequest(dataset_ids=[dataset_id], query="PP棉滤芯 价格", search=KEYWORD)
    )
    assert any("45元" in p.content and p.title == "价格表" for p in reply.paragraphs), reply
