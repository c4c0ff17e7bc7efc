"""Documents and paragraphs over HTTP, against the running stack with real files made
by the libraries that write each format: an upload answers at once with the document
``queued`` and the document then reaches ``ready``; what the gateway can judge (size, type,
limits) is refused before any work, with a message that names the problem; paragraphs are
listed a page at a time, edited, turned off, added and deleted, and the hit test follows."""

from __future__ import annotations

import dataclasses
import http.server
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from gateway.app import create_app
from gateway.backends import Backends
from gateway.labels import labels_json
from kbcore.document_types import SOURCE_TYPES, SUPPORTED_SUFFIXES
from kbcore.vocabulary import DOCUMENT_STATUS
from tests.document_jobs import RUNNING, wait_for_documents
from tests.fixtures import documents as files
from tests.harness import Stack, http_client

MiB = 1024 * 1024
DOCUMENT_KEYS = [
    "id",
    "dataset_id",
    "name",
    "paragraph_count",
    "char_length",
    "create_time",
    "status",
    "progress",
    "error",
    "source_type",
    "update_time",
    "meta",
    "source",
]
PARAGRAPH_KEYS = ["id", "dataset_id", "document_id", "title", "content", "is_active", "position"]
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


async def new_dataset(client: httpx.AsyncClient, name: str) -> str:
    created = await client.post("/api/dataset", json={"name": name})
    assert created.status_code == 200, created.text
    return str(created.json()["data"]["id"])


async def upload(client: httpx.AsyncClient, dataset_id: str, name: str, data: bytes, **kwargs: Any) -> httpx.Response:
    return await client.post(f"/api/dataset/{dataset_id}/document", files={"file": (name, data)}, **kwargs)


async def listed(client: httpx.AsyncClient, dataset_id: str) -> list[dict[str, Any]]:
    answer = await client.get(f"/api/dataset/{dataset_id}/document")
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"])


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with stack.http() as http:
        yield http


@pytest.fixture
async def docx_document(client: httpx.AsyncClient, unique: str) -> dict[str, Any]:
    """A ready DOCX in a dataset of its own."""
    dataset_id = await new_dataset(client, f"docx-{unique}")
    answer = await upload(client, dataset_id, "manual.docx", files.docx_with_headings_and_table())
    assert answer.status_code == 200, answer.text
    [document] = await wait_for_documents(client, dataset_id)
    assert document["status"] == "ready", document
    return document


# Upload: at once, queued, then ready ---------------------------------------------------------


async def test_a_docx_upload_answers_at_once_with_the_queued_document_which_then_becomes_ready(
    client: httpx.AsyncClient, unique: str
) -> None:
    dataset_id = await new_dataset(client, f"upload-{unique}")
    answer = await client.post(
        f"/api/dataset/{dataset_id}/document",
        files={"file": ("说明书.docx", files.docx_with_headings_and_table(), DOCX_MIME)},
        data={"name": f"扫地机器人说明书{unique}"},
    )
    assert answer.status_code == 200, answer.text
    queued = answer.json()["data"]
    assert list(queued) == DOCUMENT_KEYS
    assert queued["status"] in RUNNING and queued["source_type"] == "docx", queued
    assert queued["name"] == f"扫地机器人说明书{unique}"

    one = await client.get(f"/api/dataset/{dataset_id}/document/{queued['id']}")
    assert one.status_code == 200 and one.json()["data"]["id"] == queued["id"]
    [ready] = await wait_for_documents(client, dataset_id, [queued["id"]])
    assert ready["status"] == "ready" and ready["error"] == "", ready
    assert ready["paragraph_count"] > 0 and ready["progress"]["done"] == ready["progress"]["total"]
    assert ready["update_time"] >= ready["create_time"]

    hits = await client.get(
        f"/api/dataset/{dataset_id}/hit_test", params={"query_text": "滤网多久保养一次", "similarity": 0}
    )
    assert any(files.DOCX_TABLE_VALUE in p["content"] for p in hits.json()["data"]), "a table cell is findable"


async def test_a_zip_answers_with_the_list_of_its_documents(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"zip-{unique}")
    archive = files.zip_of(
        {
            "规定/a.md": f"# 值班规定{unique}\n\n夜班人员每两小时巡查一次。\n".encode(),
            "b.csv": files.csv_rows(),
            "c.png": b"\x89PNG not a document",
        }
    )
    answer = await upload(client, dataset_id, "batch.zip", archive)
    assert answer.status_code == 200, answer.text
    queued = answer.json()["data"]
    assert isinstance(queued, list) and len(queued) == 2, queued
    assert {d["source_type"] for d in queued} == {"md", "csv"}
    settled = await wait_for_documents(client, dataset_id, [d["id"] for d in queued])
    assert all(d["status"] == "ready" for d in settled), settled
    named = await client.post(
        f"/api/dataset/{dataset_id}/document", files={"file": ("batch.zip", archive)}, data={"name": "一个名字"}
    )
    assert named.status_code == 400 and "named by their paths" in named.json()["message"]


async def test_json_paragraphs_are_queued_too(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"json-{unique}")
    body = {"name": "手录", "paragraphs": [{"title": "开放时间", "content": f"图书馆每天八点开放。{unique}"}]}
    answer = await client.post(f"/api/dataset/{dataset_id}/document", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["source_type"] == "paragraphs"
    [ready] = await wait_for_documents(client, dataset_id)
    assert ready["status"] == "ready" and ready["paragraph_count"] == 1


# Refusals before any work ------------------------------------------------------------------


async def test_a_file_over_the_upload_limit_is_413_and_nothing_is_stored(stack: Stack, unique: str) -> None:
    """A gateway whose KB_UPLOAD_MAX_MB is 1, in front of the same services: the file alone over
    the limit (inside the body allowance) is refused while read, a body over the allowance at
    the edge; either way the document list stays empty."""
    settings = dataclasses.replace(stack.settings, upload_max_mb=1)
    backends = Backends.connect(settings)
    app = create_app(settings, backends)
    transport = httpx.ASGITransport(app=app)
    try:
        async with http_client("http://127.0.0.1", stack.operator_token, transport=transport, timeout=60) as small:
            dataset_id = await new_dataset(small, f"limit-{unique}")
            rules = (await small.get("/api/dataset/document/upload_rules")).json()["data"]
            assert rules["max_mb"] == 1 and ".docx" in rules["suffixes"]
            just_over = await upload(small, dataset_id, "big.txt", b"a" * (MiB + 1))
            assert just_over.status_code == 413, just_over.text
            assert just_over.json()["message"] == "the file is larger than the upload limit of 1 MiB (KB_UPLOAD_MAX_MB)"
            far_over = await upload(small, dataset_id, "huge.txt", b"a" * (3 * MiB))
            assert far_over.status_code == 413 and "2 MiB" in far_over.json()["message"], far_over.text
            assert await listed(small, dataset_id) == []
            at_limit = await upload(small, dataset_id, "fits.txt", f"刚好在上限内。{unique}\n".encode() * 1000)
            assert at_limit.status_code == 200, at_limit.text
    finally:
        await backends.close()


async def test_an_unsupported_type_is_415_naming_the_supported_ones(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"types-{unique}")
    for name in ("slides.key", "photo.png", "no-suffix"):
        answer = await upload(client, dataset_id, name, b"whatever")
        assert answer.status_code == 415, (name, answer.text)
        message = answer.json()["message"]
        assert name in message and ".docx" in message and ".pdf" in message and ".zip" in message, message
    assert await listed(client, dataset_id) == []


async def test_a_file_whose_extension_lies_is_400_and_nothing_is_stored(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"lies-{unique}")
    for name, data in (
        ("report.pdf", files.docx_with_headings_and_table()),
        ("manual.docx", files.chinese_pdf()),
        ("table.xlsx", b"just some text, not a workbook"),
    ):
        answer = await upload(client, dataset_id, name, data)
        assert answer.status_code == 400, (name, answer.text)
        assert answer.json()["message"], name
    assert await listed(client, dataset_id) == []


async def test_web_documents_are_checked_before_any_fetch(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"web-{unique}")
    path = f"/api/dataset/{dataset_id}/document/web"
    for body, words in (
        ({"source_url_list": []}, "source_url_list"),
        ({"source_url_list": ["ftp://example.com/a"]}, "not an http(s) address"),
        ({"source_url_list": ["https://"]}, "not an http(s) address"),
        ({"source_url_list": ["https://example.com/" + "a" * 3000]}, "source_url_list"),
        ({"source_url_list": ["https://example.com/"], "selector": "#main"}, "selector is not supported"),
    ):
        answer = await client.post(path, json=body)
        assert answer.status_code == 400 and words in answer.json()["message"], (body, answer.text)
    assert await listed(client, dataset_id) == []


async def test_a_web_page_at_a_private_address_is_refused_by_default(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"private-{unique}")
    answer = await client.post(
        f"/api/dataset/{dataset_id}/document/web", json={"source_url_list": ["http://127.0.0.1:9/intranet"]}
    )
    if answer.status_code == 200:  # refused by the job rather than on submission: the document says why
        [document] = await wait_for_documents(client, dataset_id)
        assert document["status"] == "failed" and document["error"], document
    else:
        assert answer.status_code == 400 and "source_url_list[0]" in answer.json()["message"], answer.text


class _IntranetPage(http.server.BaseHTTPRequestHandler):
    """An intranet page with navigation, a sidebar and a footer around the article; 404 elsewhere."""

    def do_GET(self) -> None:
        found = self.path == "/travel.html"
        body = files.html_page_with_nav().encode() if found else b"not here"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads the answers, not the log."""


@pytest.fixture
def intranet() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _IntranetPage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


async def test_a_web_page_from_an_allowed_host_ingests_its_article_without_the_navigation(
    loopback_stack: Stack, intranet: str, unique: str
) -> None:
    async with loopback_stack.http() as client:
        dataset_id = await new_dataset(client, f"intranet-{unique}")
        path = f"/api/dataset/{dataset_id}/document/web"
        answer = await client.post(path, json={"source_url_list": [f"{intranet}/travel.html"], "selector": ""})
        assert answer.status_code == 200, answer.text
        [queued] = answer.json()["data"]
        assert queued["source_type"] == "url" and queued["status"] in RUNNING, queued
        [ready] = await wait_for_documents(client, dataset_id)
        assert ready["status"] == "ready", ready
        base = f"/api/dataset/{dataset_id}/document/{ready['id']}/paragraph"
        contents = [p["content"] for p in (await client.get(f"{base}/1/200")).json()["data"]["records"]]
        assert any("每晚不超过600元" in c for c in contents), contents
        assert not any(files.NAV_TEXT.split()[0] in c or files.FOOTER_TEXT in c for c in contents), contents
        missing = await client.post(
            path, json={"source_url_list": [f"{intranet}/travel.html", f"{intranet}/gone.html"]}
        )
        assert missing.status_code == 400, missing.text
        assert missing.json()["message"].startswith("source_url_list[1]: "), missing.text
        await a_web_document_syncs_over_http(client, dataset_id, ready, f"{intranet}/travel.html")


async def a_web_document_syncs_over_http(
    client: httpx.AsyncClient, dataset_id: str, ready: dict[str, Any], url: str
) -> None:
    """MaxKB's sync routes on a page that did not change, and what they refuse."""
    assert ready["meta"] == {"source_url": url} and ready["source"]["state"] == "" and ready["source"]["checked_at"]
    assert ready["name"] == "差旅报销规定", "named by the page's title"
    synced = await client.put(f"/api/dataset/{dataset_id}/document/{ready['id']}/sync")
    assert synced.status_code == 200, synced.text
    data = synced.json()["data"]
    assert list(data) == [*DOCUMENT_KEYS, "sync"] and data["sync"]["outcome"] == "unchanged", data
    assert data["status"] == "ready" and data["source"]["checked_at"] >= ready["source"]["checked_at"]
    every = await client.put(f"/api/dataset/{dataset_id}/sync_web", json={"sync_type": "replace"})
    assert every.status_code == 200 and [d["id"] for d in every.json()["data"]] == [ready["id"]], every.text
    complete = await client.put(f"/api/dataset/{dataset_id}/sync_web", json={"sync_type": "complete"})
    assert complete.status_code == 400 and "replace" in complete.json()["message"], complete.text


async def test_a_sync_schedule_and_a_sync_are_refused_with_a_sentence(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"sync-{unique}")
    body = {"name": "手写", "paragraphs": [{"title": "", "content": "手写的段落。"}]}
    written = (await client.post(f"/api/dataset/{dataset_id}/document", json=body)).json()["data"]
    refused = await client.put(f"/api/dataset/{dataset_id}/document/{written['id']}/sync")
    assert refused.status_code == 400 and "not imported from a web page" in refused.json()["message"], refused.text
    assert written["meta"] == {} and written["source"] == {"checked_at": "", "state": "", "note": ""}
    unknown = await client.put(f"/api/dataset/{dataset_id}/document/00000000-0000-0000-0000-000000000000/sync")
    assert unknown.status_code == 404, unknown.text
    nothing = await client.put(f"/api/dataset/{dataset_id}/sync_web")
    assert nothing.status_code == 200 and nothing.json()["data"] == [], nothing.text
    for hours in (0.001, -1, 721, "24"):
        answer = await client.put(f"/api/dataset/{dataset_id}", json={"sync_hours": hours})
        assert answer.status_code == 400 and "sync_hours" in answer.json()["message"], (hours, answer.text)
    daily = await client.put(f"/api/dataset/{dataset_id}", json={"sync_hours": 24})
    assert daily.status_code == 200 and daily.json()["data"]["sync_hours"] == 24, daily.text
    assert daily.json()["data"]["sync_due_at"] > daily.json()["data"]["create_time"]
    off = await client.put(f"/api/dataset/{dataset_id}", json={"sync_hours": 0})
    assert (off.json()["data"]["sync_hours"], off.json()["data"]["sync_due_at"]) == (0, "")


async def test_a_split_preview_shows_what_an_import_with_the_same_rules_makes(
    client: httpx.AsyncClient, unique: str
) -> None:
    rules = {"limit": "80", "patterns": ["。", "\\n"], "overlap": "10", "title_levels": "2", "keep_tables": "true"}
    pdf = ("手册.pdf", files.chinese_pdf(), "application/pdf")
    previewed = await client.post("/api/dataset/document/split", files={"file": pdf}, data=rules)
    assert previewed.status_code == 200, previewed.text
    [preview] = previewed.json()["data"]
    assert preview["name"] == "手册.pdf" and preview["total"] == len(preview["content"]) > 0, preview
    assert preview["unused_separators"] == ["\n"], "a line break cuts nothing in a PDF's joined lines"
    dataset_id = await new_dataset(client, f"split-{unique}")
    answer = await client.post(f"/api/dataset/{dataset_id}/document", files={"file": pdf}, data=rules)
    assert answer.status_code == 200, answer.text
    [document] = await wait_for_documents(client, dataset_id)
    records = (await client.get(f"/api/dataset/{dataset_id}/document/{document['id']}/paragraph/1/200")).json()
    imported = [{"title": p["title"], "content": p["content"]} for p in records["data"]["records"]]
    assert imported == preview["content"]


@pytest.mark.parametrize(
    ("fields", "status", "said"),
    [
        ({"limit": "0"}, 400, "max_length must be between 50 and 10000"),
        ({"limit": "1000000000"}, 400, "whole number"),
        ({"limit": "-5"}, 400, "whole number"),
        ({"patterns": ""}, 400, "a separator must have 1 to 20 characters"),
        ({"keep_tables": "maybe"}, 400, "keep_tables"),
        ({"overlap": "400", "limit": "600"}, 400, "overlap must be between 0 and half of max_length"),
    ],
)
async def test_split_rules_out_of_bounds_are_refused_in_words(
    client: httpx.AsyncClient, fields: dict[str, str], status: int, said: str
) -> None:
    md = ("规定.md", "# 规定\n\n第一条。第二条。".encode(), "text/markdown")
    answer = await client.post("/api/dataset/document/split", files={"file": md}, data=fields)
    assert answer.status_code == status and said in answer.json()["message"], answer.text


async def test_a_split_preview_needs_a_supported_file(client: httpx.AsyncClient) -> None:
    empty = await client.post("/api/dataset/document/split", files={"other": ("a.md", b"x", "text/markdown")})
    assert empty.status_code == 400 and "form field 'file'" in empty.json()["message"], empty.text
    program = await client.post(
        "/api/dataset/document/split", files={"file": ("a.exe", b"MZ", "application/octet-stream")}
    )
    assert program.status_code == 415, program.text


# Cancel ------------------------------------------------------------------------------------


async def test_cancelling_a_long_job_leaves_nothing_searchable(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"cancel-{unique}")
    answer = await upload(client, dataset_id, "report.pdf", files.big_pdf(120))
    assert answer.status_code == 200, answer.text
    queued = answer.json()["data"]
    cancelled = await client.put(f"/api/dataset/{dataset_id}/document/{queued['id']}/cancel_task", json={"type": 1})
    assert cancelled.status_code == 200, cancelled.text
    assert list(cancelled.json()["data"]) == DOCUMENT_KEYS
    [document] = await wait_for_documents(client, dataset_id)
    assert document["status"] != "ready" and document["paragraph_count"] == 0, document
    hits = await client.get(
        f"/api/dataset/{dataset_id}/hit_test", params={"query_text": "设备巡检记录温度", "similarity": 0}
    )
    assert hits.json()["data"] == []
    unknown = await client.put(f"/api/dataset/{dataset_id}/document/00000000-0000-0000-0000-000000000000/cancel_task")
    assert unknown.status_code == 404, unknown.text


# Paragraphs ----------------------------------------------------------------------------------


async def test_paragraph_routes_validate_before_any_work(
    client: httpx.AsyncClient, docx_document: dict[str, Any]
) -> None:
    base = f"/api/dataset/{docx_document['dataset_id']}/document/{docx_document['id']}/paragraph"
    for path, field in (
        (f"{base}/0/10", "current_page"),
        (f"{base}/1/0", "page_size"),
        (f"{base}/1/201", "page_size"),
        (f"{base}/1/1000000", "page_size"),
        (f"{base}/99999999999/10", "current_page"),
    ):
        answer = await client.get(path)
        assert answer.status_code == 400 and field in answer.json()["message"], (path, answer.text)
    page = (await client.get(f"{base}/1/200")).json()["data"]
    target = page["records"][0]["id"]
    for method, path, body, words in (
        ("POST", base, {"content": "x" * 4097}, "content"),
        ("POST", base, {"content": ""}, "content"),
        ("POST", base, {"content": "   "}, "blank"),
        ("POST", base, {"title": "t" * 257, "content": "正文"}, "title"),
        ("PUT", f"{base}/{target}", {"content": "x" * 4097}, "content"),
        ("PUT", f"{base}/{target}", {}, "at least one of"),
        ("PUT", f"{base}/{target}", {"is_active": "maybe"}, "is_active"),
    ):
        answer = await client.request(method, path, json=body)
        assert answer.status_code == 400 and words in answer.json()["message"], (method, body, answer.text)
    assert (await client.get(f"{base}/1/200")).json()["data"] == page, "nothing changed"


async def test_paragraphs_are_paged_edited_disabled_added_and_deleted(
    client: httpx.AsyncClient, docx_document: dict[str, Any], unique: str
) -> None:
    dataset_id = docx_document["dataset_id"]
    base = f"/api/dataset/{dataset_id}/document/{docx_document['id']}/paragraph"
    first = (await client.get(f"{base}/1/2")).json()["data"]
    assert list(first) == ["records", "current", "size", "total"]
    assert first["current"] == 1 and first["size"] == 2 and first["total"] == docx_document["paragraph_count"]
    assert len(first["records"]) == min(2, first["total"]) and list(first["records"][0]) == PARAGRAPH_KEYS
    everything = (await client.get(f"{base}/1/200")).json()["data"]["records"]
    assert [p["position"] for p in everything] == sorted(p["position"] for p in everything)

    async def hit(query: str) -> list[str]:
        answer = await client.get(f"/api/dataset/{dataset_id}/hit_test", params={"query_text": query, "similarity": 0})
        return [p["content"] for p in answer.json()["data"]]

    edited = everything[0]
    marker = f"紫檀色{unique}"
    changed = await client.put(
        f"{base}/{edited['id']}", json={"title": "改过的标题", "content": f"机身颜色为{marker}。"}
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["title"] == "改过的标题" and marker in changed.json()["data"]["content"]
    assert any(marker in c for c in await hit(f"机身颜色{marker}"))

    table = next(p for p in everything if files.DOCX_TABLE_VALUE in p["content"])
    off = await client.put(f"{base}/{table['id']}", json={"is_active": False})
    assert off.status_code == 200 and off.json()["data"]["is_active"] is False
    assert not any(files.DOCX_TABLE_VALUE in c for c in await hit("滤网保养周期"))
    on = await client.put(f"{base}/{table['id']}", json={"is_active": True})
    assert on.json()["data"]["is_active"] is True
    assert any(files.DOCX_TABLE_VALUE in c for c in await hit("滤网保养周期"))

    added = await client.post(f"{base}", json={"title": "售后", "content": f"整机保修两年，电池保修一年。{unique}"})
    assert added.status_code == 200, added.text
    assert (await client.get(f"{base}/1/1")).json()["data"]["total"] == len(everything) + 1
    deleted = await client.delete(f"{base}/{added.json()['data']['id']}")
    assert deleted.status_code == 200 and deleted.json()["data"] is True
    assert (await client.get(f"{base}/1/1")).json()["data"]["total"] == len(everything)


# Datasets, labels ----------------------------------------------------------------------------


async def test_deleting_a_dataset_names_the_applications_it_was_removed_from(
    client: httpx.AsyncClient, unique: str
) -> None:
    doomed = await new_dataset(client, f"doomed-{unique}")
    kept = await new_dataset(client, f"kept-{unique}")
    app = await client.post("/api/application", json={"name": f"用两个库{unique}", "dataset_id_list": [doomed, kept]})
    app_id = app.json()["data"]["id"]
    answer = await client.delete(f"/api/dataset/{doomed}")
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"detached_applications": [{"id": app_id, "name": f"用两个库{unique}"}]}
    assert (await client.get(f"/api/application/{app_id}")).json()["data"]["dataset_id_list"] == [kept]
    unused = await client.delete(f"/api/dataset/{kept}")
    assert unused.json()["data"] == {"detached_applications": [{"id": app_id, "name": f"用两个库{unique}"}]}


async def test_the_pages_get_a_label_for_every_document_status_and_source_type(client: httpx.AsyncClient) -> None:
    labels = labels_json()
    assert set(labels["document_statuses"]) == set(DOCUMENT_STATUS.names)
    assert set(SOURCE_TYPES.values()) | {"url", "paragraphs"} <= set(labels["source_types"])
    rules = (await client.get("/api/dataset/document/upload_rules")).json()["data"]
    assert (
        rules["suffixes"] == list(SUPPORTED_SUFFIXES) and rules["max_mb"] >= 1 and "supported types" in rules["types"]
    )
