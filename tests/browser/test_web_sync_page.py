"""Web pages kept fresh from the operator page: a page's document shows its address and when
it was checked; 同步 says the page did not change, then that it changed (and its new version is
ingested), then that it is gone while the document keeps serving; a knowledge base's schedule
is chosen and its next sync shown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import expect

from tests.browser.conftest import OperatorPage
from tests.document_jobs import wait_for_documents
from tests.harness import Stack
from tests.web_site import Site, page_html, serve_site

PATH = "/notice/1/index.html"


@pytest.fixture
def site() -> Iterator[tuple[Site, str]]:
    with serve_site({PATH: page_html(1)}) as served:
        yield served


async def test_a_web_document_is_synced_and_scheduled_from_the_operator_page(
    loopback_stack: Stack, operator_page: OperatorPage, site: tuple[Site, str], unique: str
) -> None:
    web, base = site
    name = f"网页库 {unique}"
    async with loopback_stack.http() as client:
        dataset_id = (await client.post("/api/dataset", json={"name": name})).json()["data"]["id"]
        imported = await client.post(f"/api/dataset/{dataset_id}/document/web", json={"source_url_list": [base + PATH]})
        assert imported.status_code == 200, imported.text
        [ready] = await wait_for_documents(client, dataset_id)
        assert ready["status"] == "ready" and ready["name"] == "第1号通知", ready

    page = await operator_page(loopback_stack)
    await page.goto(f"{loopback_stack.url}/ui/admin")
    await page.get_by_test_id("dataset").filter(has_text=name).click()
    document = page.get_by_test_id("document").filter(has_text="第1号通知")
    await expect(document.get_by_test_id("document-source")).to_contain_text(base + PATH)
    await expect(document.get_by_test_id("document-source")).to_contain_text("检查于")

    await document.get_by_test_id("sync-document").click()
    outcome = page.get_by_test_id("sync-outcome")
    await expect(outcome).to_have_attribute("data-outcome", "unchanged")
    await expect(outcome).to_contain_text("网页没有变化")

    web.pages[PATH] = page_html(1, revised=True)
    await document.get_by_test_id("sync-document").click()
    await expect(outcome).to_have_attribute("data-outcome", "queued")
    await expect(outcome).to_contain_text("只向量化改动的段落")
    await expect(document).to_have_attribute("data-status", "ready", timeout=30_000)

    web.pages[PATH] = None
    await document.get_by_test_id("sync-document").click()
    await expect(outcome).to_have_attribute("data-outcome", "gone")
    await expect(document.get_by_test_id("document-source-state")).to_have_text("网页已不存在")
    await expect(document).to_contain_text("2 个段落")

    await page.get_by_test_id("dataset-sync-hours").select_option("24")
    await page.get_by_test_id("save-dataset-sync").click()
    await expect(page.get_by_test_id("dataset-sync-due")).to_contain_text("下次同步")
    await expect(page.get_by_test_id("dataset-sync-hours")).to_have_value("24")
