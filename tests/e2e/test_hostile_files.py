"""Hostile files over HTTP against the running stack: each file of the corpus is refused with its
sentence, in the request where the file's structure shows it (400) and otherwise as its
document's failure; the stack goes on answering. A long parse is cancelled within a progress
report, and a spreadsheet cell holding a NUL is taken in without it (on PostgreSQL, which cannot
store one, the answer quoting it is saved and ends normally)."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator

import httpx
import pytest

from gateway.presenter import STORED_FAILURE_STATUS
from kbcore.refusals.error_catalogue import words_for_http_status
from tests.document_jobs import RUNNING, wait_for_documents
from tests.eventually import eventually
from tests.fixtures import documents, hostile
from tests.harness import Stack
from tests.sse_client import answer_text, ask
from tools.seed_demo import DEMO_APPLICATION_ID

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
async def client(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with stack.http() as http:
        yield http


async def new_dataset(client: httpx.AsyncClient, name: str) -> str:
    created = await client.post("/api/dataset", json={"name": name})
    assert created.status_code == 200, created.text
    return str(created.json()["data"]["id"])


async def upload(client: httpx.AsyncClient, dataset_id: str, filename: str, data: bytes) -> httpx.Response:
    return await client.post(f"/api/dataset/{dataset_id}/document", files={"file": (filename, data)})


async def demo_still_answers(client: httpx.AsyncClient) -> None:
    opened = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
    answer, frames = await ask(client, opened.json()["data"], "重症医学科每天的探视时间是几点？")
    assert answer.status_code == 200 and frames[-1].data.get("is_end") is True, frames[-1:]
    assert "16:00" in answer_text(frames)


async def test_every_file_of_the_hostile_corpus_is_refused_with_its_sentence_and_the_stack_answers_on(
    client: httpx.AsyncClient, unique: str
) -> None:
    dataset_id = await new_dataset(client, f"hostile-{unique}")
    for file in hostile.CORPUS:
        answer = await upload(client, dataset_id, file.filename, file.make())
        if file.refused_at == hostile.SUBMISSION:
            assert answer.status_code == 400, (file.name, answer.text)
            assert hostile.refusal_words(file).search(answer.json()["message"]), (file.name, answer.text)
            continue
        assert answer.status_code == 200, (file.name, answer.text)
        [document] = await wait_for_documents(client, dataset_id, [answer.json()["data"]["id"]])
        assert document["status"] == "failed", (file.name, document)
        assert hostile.refusal_words(file).search(document["error"]), (file.name, document)
    listed = await client.get(f"/api/dataset/{dataset_id}/document")
    assert all(d["status"] == "failed" for d in listed.json()["data"]), "nothing half-taken stays behind"
    await each_failure_reads_in_chinese(client, dataset_id)
    await demo_still_answers(client)


async def each_failure_reads_in_chinese(client: httpx.AsyncClient, dataset_id: str) -> None:
    """A Chinese reader reads each document's own failure in Chinese (not the general words, with
    an error id, that words the catalogue does not know would get instead)."""
    listed = await client.get(f"/api/dataset/{dataset_id}/document", headers={"Accept-Language": "zh-CN"})
    general = words_for_http_status(STORED_FAILURE_STATUS).render("zh")
    for document in listed.json()["data"]:
        assert CJK.search(document["error"]) and general not in document["error"], document


async def test_a_fifty_mib_line_is_refused_within_seconds_while_another_datasets_upload_becomes_ready(
    client: httpx.AsyncClient, unique: str
) -> None:
    """The attacker's file (one line of 50 MiB of words) was still parsing after ten minutes while
    every other upload waited: now it is refused at the character limit as it is read, and a small
    upload of another dataset, sent right after it, becomes ready meanwhile."""
    attacked, other = await new_dataset(client, f"long-line-{unique}"), await new_dataset(client, f"other-{unique}")
    started = time.monotonic()
    answer = await upload(client, attacked, "一行.txt", hostile.txt_one_long_line())
    assert answer.status_code == 200, answer.text
    small = await upload(client, other, "值班.md", "# 值班\n\n值班人员每两小时巡查一次并记录。".encode())
    assert small.status_code == 200, small.text
    [ready] = await wait_for_documents(client, other, timeout=30)
    [refused] = await wait_for_documents(client, attacked, timeout=30)
    ended = time.monotonic() - started
    assert ready["status"] == "ready", ready
    assert refused["status"] == "failed" and "more than 20,000,000 characters" in refused["error"], refused
    assert "KB_PARSE_MAX_CHARS" in refused["error"]
    assert ended < 30, f"both ended {ended:.1f} s after the upload began"


async def test_b9_cancelling_a_long_parse_ends_its_document_cancelled(client: httpx.AsyncClient, unique: str) -> None:
    dataset_id = await new_dataset(client, f"cancel-parse-{unique}")
    answer = await upload(client, dataset_id, "报告.pdf", documents.big_pdf(1500))
    assert answer.status_code == 200, answer.text
    document_id = answer.json()["data"]["id"]

    async def status() -> str:
        return str((await client.get(f"/api/dataset/{dataset_id}/document/{document_id}")).json()["data"]["status"])

    await eventually(status, lambda now: now == "parsing", timeout=30, interval=0.05, what="the job parsing")
    cancelled = await client.put(f"/api/dataset/{dataset_id}/document/{document_id}/cancel_task", json={"type": 1})
    assert cancelled.status_code == 200, cancelled.text
    [document] = await wait_for_documents(client, dataset_id, [document_id], timeout=10)
    assert document["status"] == "cancelled" and "cancelled" in document["error"], document
    assert document["paragraph_count"] == 0
    assert document["status"] not in RUNNING


async def test_b5_a_nul_in_a_spreadsheet_cell_is_dropped_and_the_answer_quoting_it_is_saved(
    client: httpx.AsyncClient, unique: str
) -> None:
    dataset_id = await new_dataset(client, f"nul-{unique}")
    answer = await upload(client, dataset_id, "价格.xlsx", hostile.xlsx_nul_cell())
    assert answer.status_code == 200, answer.text
    [document] = await wait_for_documents(client, dataset_id)
    assert document["status"] == "ready", document
    app = await client.post("/api/application", json={"name": f"价格-{unique}", "dataset_id_list": [dataset_id]})
    app_id = app.json()["data"]["id"]
    chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
    asked, frames = await ask(client, chat_id, "ZX-9多少钱？")
    assert asked.status_code == 200 and frames[-1].data.get("is_end") is True, frames[-1:]
    assert "990元整" in answer_text(frames)
    record_id = frames[-1].data["chat_record_id"]
    record = (await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}")).json()["data"]
    assert record["status"] == "answered" and "990元整" in record["answer_text"], record
