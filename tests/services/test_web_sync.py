"""Web documents kept fresh, through a real retrieval server and a local web server that sends
ETag and Last-Modified and answers a matching conditional request with 304: re-syncing 12
unchanged pages makes 12 conditional requests and embeds nothing; a changed page re-embeds only
its changed paragraph; a page that is gone is marked and keeps serving; pages are named by their
titles; a dataset's schedule syncs it when due and refuses a period under an hour."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Sequence

import grpc
import pytest
from sqlalchemy import update

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.db.engine import run_write
from kbcore.db.tables import Dataset
from kbcore.rpc.stubs import RetrievalStubs
from services.retrieval.ingestion.web_sync import SYNC_CONCURRENCY
from tests.eventually import eventually
from tests.grpc_status import status_of
from tests.services.conftest import LoopbackNode
from tests.web_site import Site, page_html, serve_site

# Three times the pages one dataset's sync fetches at once (SYNC_CONCURRENCY): every page after
# the first few waits for a free fetch. Each page is parsed by a process of its own on import,
# so more pages only add seconds, not cases.
PAGES = 3 * SYNC_CONCURRENCY
READY = pb.DOCUMENT_STATUS_READY


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    """The local web site with its pages, and its base URL."""
    with serve_site({f"/notice/{i}/index.html": page_html(i) for i in range(PAGES)}) as served:
        yield served


async def dataset(stub: RetrievalStubs, unique: str) -> str:
    created = await stub.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"sync-{unique}"))
    return str(created.dataset.id)


async def all_ready(stub: RetrievalStubs, dataset_id: str, count: int) -> list[pb.Document]:
    listed = await eventually(
        lambda: stub.documents.ListDocuments(pb.ListDocumentsRequest(dataset_id=dataset_id)),
        lambda reply: len(reply.documents) == count and all(d.status == READY for d in reply.documents),
        timeout=180,
        interval=0.1,
        what="every page ingested",
    )
    return list(listed.documents)


async def imported(node: LoopbackNode, base: str, dataset_id: str, paths: Sequence[str]) -> dict[str, pb.Document]:
    for path in paths:
        await node.stub.documents.SubmitDocuments(pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=base + path))
    documents = await all_ready(node.stub, dataset_id, len(paths))
    return {d.source_url.removeprefix(base): d for d in documents}


async def test_re_syncing_unchanged_pages_costs_one_conditional_request_each_and_no_embedding(
    loopback_node: LoopbackNode, site: tuple[Site, str], unique: str
) -> None:
    web, base = site
    dataset_id = await dataset(loopback_node.stub, unique)
    documents = await imported(loopback_node, base, dataset_id, list(web.pages))
    assert {d.name for d in documents.values()} == {f"第{i}号通知" for i in range(PAGES)}, "named by their titles"
    assert all(d.source_checked_at and d.source_state == "" for d in documents.values())
    web.requests.clear()
    embedded = loopback_node.embedder.embedded

    synced = await loopback_node.stub.documents.SyncDocuments(pb.SyncDocumentsRequest(dataset_id=dataset_id))

    assert [s.outcome for s in synced.documents] == [pb.SYNC_OUTCOME_UNCHANGED] * PAGES
    assert len(web.requests) == PAGES and all(etag for _, etag in web.requests), "one conditional request a page"
    assert loopback_node.embedder.embedded == embedded, "nothing parsed or embedded"
    assert all(s.document.status == READY and s.document.progress_total == 0 for s in synced.documents)

    changed = "/notice/7/index.html"
    web.pages[changed] = page_html(7, revised=True)
    synced = await loopback_node.stub.documents.SyncDocuments(pb.SyncDocumentsRequest(dataset_id=dataset_id))
    outcomes = {s.document.source_url.removeprefix(base): s.outcome for s in synced.documents}
    assert outcomes.pop(changed) == pb.SYNC_OUTCOME_QUEUED
    assert set(outcomes.values()) == {pb.SYNC_OUTCOME_UNCHANGED}
    await eventually(
        lambda: loopback_node.stub.documents.GetDocument(
            pb.GetDocumentRequest(dataset_id=dataset_id, document_id=documents[changed].id)
        ),
        lambda d: d.status == READY and d.progress_total == 0,
        timeout=60,
        interval=0.05,
        what="the changed page's new version",
    )
    assert loopback_node.embedder.embedded == embedded + 1, "only the changed paragraph embedded"
    found = await loopback_node.stub.search.Search(
        pb.SearchRequest(dataset_ids=[dataset_id], query="第7号通知 逾期不办理 视为放弃")
    )
    assert any("视为放弃" in p.content for p in found.paragraphs)


async def test_a_page_that_is_gone_is_marked_and_keeps_serving(
    loopback_node: LoopbackNode, site: tuple[Site, str], unique: str
) -> None:
    web, base = site
    dataset_id = await dataset(loopback_node.stub, unique)
    path = "/notice/3/index.html"
    documents = await imported(loopback_node, base, dataset_id, [path])
    web.pages[path] = None

    synced = await loopback_node.stub.documents.SyncDocuments(
        pb.SyncDocumentsRequest(dataset_id=dataset_id, document_ids=[documents[path].id])
    )

    [result] = synced.documents
    assert result.outcome == pb.SYNC_OUTCOME_GONE and "404" in result.message
    assert (result.document.status, result.document.source_state) == (READY, "gone")
    assert result.document.paragraph_count == documents[path].paragraph_count
    found = await loopback_node.stub.search.Search(
        pb.SearchRequest(dataset_ids=[dataset_id], query="第3号通知 办理时间")
    )
    assert found.paragraphs, "still searchable"


async def test_pages_of_one_title_stay_two_documents_and_one_address_stays_one(
    loopback_node: LoopbackNode, site: tuple[Site, str], unique: str
) -> None:
    web, base = site
    dataset_id = await dataset(loopback_node.stub, unique)
    web.pages["/other/index.html"] = page_html(5).replace("第5号通知的办理", "另一个第5号通知的办理")
    documents = await imported(loopback_node, base, dataset_id, ["/notice/5/index.html", "/other/index.html"])
    assert documents["/notice/5/index.html"].name == "第5号通知"
    assert documents["/other/index.html"].name.startswith("第5号通知（127.0.0.1:")

    again = await loopback_node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, url=base + "/notice/5/index.html")
    )
    assert [d.id for d in again.documents] == [documents["/notice/5/index.html"].id]


async def test_a_document_not_from_a_page_cannot_be_synced(loopback_node: LoopbackNode, unique: str) -> None:
    dataset_id = await dataset(loopback_node.stub, unique)
    paragraphs = pb.ParagraphList(paragraphs=[pb.ParagraphInput(content="手写的段落。")])
    reply = await loopback_node.stub.documents.SubmitDocuments(
        pb.SubmitDocumentsRequest(dataset_id=dataset_id, name="手写", paragraphs=paragraphs)
    )
    code, message = await status_of(
        loopback_node.stub.documents.SyncDocuments(
            pb.SyncDocumentsRequest(dataset_id=dataset_id, document_ids=[reply.documents[0].id])
        )
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not imported from a web page" in message


async def test_a_due_schedule_syncs_the_dataset_and_a_period_under_an_hour_is_refused(
    loopback_node: LoopbackNode, site: tuple[Site, str], unique: str, sessions
) -> None:
    web, base = site
    dataset_id = await dataset(loopback_node.stub, unique)
    path = "/notice/9/index.html"
    await imported(loopback_node, base, dataset_id, [path])
    for hours in (-1, 721):
        code, message = await status_of(
            loopback_node.stub.datasets.UpdateDataset(pb.UpdateDatasetRequest(dataset_id=dataset_id, sync_hours=hours))
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "between 1 and 720 hours" in message
    scheduled = await loopback_node.stub.datasets.UpdateDataset(
        pb.UpdateDatasetRequest(dataset_id=dataset_id, sync_hours=2)
    )
    assert scheduled.dataset.sync_hours == 2
    due = dt.datetime.fromisoformat(scheduled.dataset.sync_due_at.removesuffix("Z"))
    assert dt.timedelta(hours=1.9) < due - dt.datetime.now(dt.UTC).replace(tzinfo=None) <= dt.timedelta(hours=2)
    web.requests.clear()

    past = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(minutes=1)
    await run_write(
        sessions, lambda s: s.execute(update(Dataset).where(Dataset.id == dataset_id).values(sync_due_at=past))
    )

    await eventually(
        lambda: _now(web),
        lambda seen: any(p == path and etag for p, etag in seen),
        timeout=30,
        what="the scheduled sync's conditional request",
    )
    listed = await loopback_node.stub.datasets.ListDatasets(pb.ListDatasetsRequest())
    [moved] = [d for d in listed.datasets if d.id == dataset_id]
    assert dt.datetime.fromisoformat(moved.sync_due_at.removesuffix("Z")) > past + dt.timedelta(hours=1.9)


async def _now(web: Site) -> list[tuple[str, str]]:
    with web.lock:
        return list(web.requests)
