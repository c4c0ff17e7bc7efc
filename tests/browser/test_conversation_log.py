"""The operator's conversation log in a real browser: filter an application's records by source
and by vote, page through them, open one to read its answer and retrieval trace, and download
the filtered set."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect
from sqlalchemy import select

from kbcore.answer_notice import OFFLINE_LABEL
from kbcore.db.tables import RecordVote, Visitor
from services.chat.callers.secret_digest import digest
from tests.browser.conftest import OperatorPage
from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_DATASET_ID

OPERATOR_QUESTION = "员工年假有几天？"
VISITOR_QUESTION = "年假需要提前几天申请？"


async def test_filter_the_log_and_open_a_record(
    stack: Stack, sessions, operator_page: OperatorPage, unique: str, artifacts: Path
) -> None:
    name = f"日志浏览器-{unique}"
    async with stack.http() as operator:
        body = {"name": name, "dataset_id_list": [DEMO_DATASET_ID]}
        app = (await operator.post("/api/application", json=body)).json()["data"]["id"]
        link = (await operator.post(f"/api/application/{app}/access_token", json={"access_num": 20})).json()["data"]
        chat_id = (await operator.get(f"/api/application/{app}/chat/open")).json()["data"]
        response, _ = await ask(operator, chat_id, OPERATOR_QUESTION)
        assert response.status_code == 200
        signed = await operator.post("/api/application/authentication", json={"access_token": link["access_token"]})
        visitor = signed.json()["data"]
    async with stack.http(headers={"Authorization": f"Bearer {visitor}"}) as client:
        visitor_chat = (await client.get(f"/api/application/{app}/chat/open")).json()["data"]
        response, frames = await ask(client, visitor_chat, VISITOR_QUESTION)
        assert response.status_code == 200
    record_id = int(frames[-1].data["id"])
    async with sessions.begin() as session:  # the visitor's down vote (votes have their own tests)
        visitor_id = await session.scalar(select(Visitor.id).where(Visitor.token_hash == digest(visitor)))
        session.add(RecordVote(record_id=record_id, voter=f"visitor:{visitor_id}", vote="down", reason="没说清楚"))

    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin#log")
    await page.get_by_test_id("log-app").select_option(app)
    rows = page.get_by_test_id("log-row")
    await expect(rows).to_have_count(2)
    await expect(page.get_by_test_id("log-page")).to_contain_text("共 2 条")
    # The answer column leaves out the offline model's notice; the record keeps it.
    await expect(rows.get_by_test_id("log-answer")).to_have_count(2)
    for answer in await rows.get_by_test_id("log-answer").all():
        await expect(answer).not_to_be_empty()
        await expect(answer).not_to_contain_text(OFFLINE_LABEL)

    await page.get_by_test_id("log-source").select_option("share_link")
    await page.get_by_test_id("log-search").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text(VISITOR_QUESTION)
    await expect(rows.first).to_contain_text("分享链接")

    await page.get_by_test_id("log-source").select_option("")
    await page.get_by_test_id("log-vote").select_option("down")
    await page.get_by_test_id("log-search").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first.get_by_test_id("log-votes-down")).to_have_text("1")  # an icon and the count
    await expect(rows.first.get_by_test_id("log-votes-up")).to_have_count(0)
    await page.get_by_test_id("log-vote").select_option("none")
    await page.get_by_test_id("log-search").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text(OPERATOR_QUESTION)

    await page.get_by_test_id("log-vote").select_option("down")
    await page.get_by_test_id("log-search").click()
    await expect(rows.first).to_contain_text(VISITOR_QUESTION)
    await rows.first.get_by_test_id("log-open").click()
    detail = page.get_by_test_id("log-detail")
    await expect(detail.get_by_test_id("record-question")).to_have_text(VISITOR_QUESTION)
    await expect(detail.get_by_test_id("answer")).to_contain_text(OFFLINE_LABEL)
    await expect(detail.get_by_test_id("trace")).to_be_visible()
    assert (await detail.get_by_test_id("stop-reason").inner_text()).strip()
    await expect(detail.get_by_test_id("trace-round").first).to_be_visible()
    await expect(detail.get_by_test_id("log-vote-reason")).to_contain_text("没说清楚")
    await page.screenshot(path=artifacts / "log-record.png", full_page=True)

    async with page.expect_download() as downloading:
        await page.get_by_test_id("log-export-csv").click()
    download = await downloading.value
    saved = artifacts / "log.csv"
    await download.save_as(saved)
    text = saved.read_text(encoding="utf-8-sig")
    assert VISITOR_QUESTION in text and OPERATOR_QUESTION not in text, "the export is the filtered set"
    await expect(page.get_by_test_id("log-export-status")).to_contain_text("1")
