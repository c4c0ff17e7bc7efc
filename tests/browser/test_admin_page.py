"""The operator page in a real browser: create a dataset, upload a Markdown document and watch
its ingestion reach ready, find it with the hit test (single query and the multi-round loop),
delete it; upload a DOCX, edit one of its paragraphs and disable another, and see the hit test
follow."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import OperatorPage, new_dataset_selected
from tests.fixtures import documents
from tests.harness import Stack

DOCUMENT = """# 青松镇社区食堂管理办法

第一条 青松镇社区食堂为年满七十周岁的老人提供午餐，每餐收费六元。

第二条 社区食堂的营业时间为每日11:00至13:00，节假日照常营业。
"""


async def test_upload_a_document_then_find_it_with_the_hit_test(
    stack: Stack, operator_page: OperatorPage, tmp_path: Path, unique: str, artifacts: Path
) -> None:
    source = tmp_path / "canteen.md"
    source.write_text(DOCUMENT, encoding="utf-8")
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")

    name = f"浏览器测试 {unique}"
    await page.get_by_test_id("dataset-name").fill(name)
    await page.get_by_test_id("create-dataset").click()
    dataset = page.get_by_test_id("dataset").filter(has_text=name)
    await dataset.click()
    await expect(dataset).to_have_attribute("aria-selected", "true")

    await page.get_by_test_id("upload-file").set_input_files(source)
    await page.get_by_test_id("upload").click()
    await expect(page.get_by_test_id("upload-status")).to_contain_text("已上传", timeout=60_000)
    assert await page.get_by_test_id("upload-progress").get_attribute("value") == "100"
    await expect(page.get_by_test_id("document")).to_have_count(1)
    await expect(page.get_by_test_id("document")).to_contain_text("青松镇社区食堂管理办法")
    await expect(page.get_by_test_id("document-status")).to_have_text("已就绪", timeout=60_000)

    await page.get_by_test_id("hit-query").fill("社区食堂每餐收费多少")
    await page.get_by_test_id("hit-similarity").fill("0")
    await page.get_by_test_id("hit-run").click()
    first = page.get_by_test_id("hit-result").first
    await expect(first).to_contain_text("每餐收费六元")
    await expect(first.get_by_test_id("hit-doc")).to_contain_text("青松镇社区食堂管理办法")

    await page.get_by_test_id("hit-multi").check()
    await page.get_by_test_id("hit-run").click()
    await expect(page.get_by_test_id("hit-round").first).to_contain_text("社区食堂")
    assert (await page.get_by_test_id("hit-stop-reason").inner_text()).strip()
    await expect(page.get_by_test_id("hit-round").first.get_by_test_id("hit-result").first).to_be_visible()
    await page.screenshot(path=artifacts / "hit-test-rounds.png", full_page=True)

    await page.get_by_test_id("delete-document").click()
    await expect(page.get_by_test_id("document")).to_have_count(0)
    async with stack.http() as client:
        datasets = (await client.get("/api/dataset")).json()["data"]
        created = next(d for d in datasets if d["name"] == name)
        assert created["document_count"] == 0
        await client.delete(f"/api/dataset/{created['id']}")


async def test_an_upload_the_server_refuses_is_explained_next_to_the_form(
    stack: Stack, operator_page: OperatorPage, tmp_path: Path, unique: str
) -> None:
    """A text file named .pdf: the page sends it (the suffix is one it takes), the server finds
    that the content is no PDF and says so next to the form; no document is left behind."""
    slides = tmp_path / "slides.pdf"
    slides.write_bytes("这不是一个PDF文件。".encode())
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    name = f"假PDF {unique}"
    await page.get_by_test_id("dataset-name").fill(name)
    await page.get_by_test_id("create-dataset").click()
    await page.get_by_test_id("dataset").filter(has_text=name).click()
    await page.get_by_test_id("upload-file").set_input_files(slides)
    await page.get_by_test_id("upload").click()
    status = page.get_by_test_id("upload-status")
    await expect(status).to_contain_text("上传失败", timeout=30_000)
    assert (await status.inner_text()).strip()
    await expect(page.get_by_test_id("document")).to_have_count(0)


async def test_a_docx_reaches_ready_then_an_edit_and_a_disabled_paragraph_change_the_hit_test(
    stack: Stack, operator_page: OperatorPage, tmp_path: Path, unique: str, artifacts: Path
) -> None:
    manual = tmp_path / "扫地机器人说明书.docx"
    manual.write_bytes(documents.docx_with_headings_and_table())
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    name = f"段落编辑 {unique}"
    await new_dataset_selected(page, name)
    await expect(page.get_by_test_id("upload-file")).to_have_attribute("accept", re.compile(r"\.docx"))

    await page.get_by_test_id("upload-file").set_input_files(manual)
    await page.get_by_test_id("upload").click()
    document = page.get_by_test_id("document")
    await expect(document).to_have_count(1)
    await expect(document.get_by_test_id("document-status")).to_have_text("已就绪", timeout=60_000)
    bar = document.get_by_test_id("document-progress")
    assert await bar.get_attribute("value") == await bar.get_attribute("max")
    await expect(document.get_by_test_id("cancel-document")).to_have_count(0)

    async def hit_test(query: str) -> None:
        await page.get_by_test_id("hit-query").fill(query)
        await page.get_by_test_id("hit-similarity").fill("0")
        await page.get_by_test_id("hit-run").click()
        await expect(page.get_by_test_id("hit-result").first).to_be_visible()

    await hit_test("滤网的保养周期")
    await expect(page.get_by_test_id("hit-result").filter(has_text=documents.DOCX_TABLE_VALUE)).to_have_count(1)

    await document.get_by_test_id("open-paragraphs").click()
    paragraphs = page.get_by_test_id("doc-paragraph")
    await expect(paragraphs.first).to_be_visible()
    charging = paragraphs.filter(has_text="充电座")
    await charging.get_by_test_id("edit-paragraph").click()
    marker = f"紫檀色{unique}"
    editor = page.get_by_test_id("paragraph-content-input")  # the one paragraph being edited
    await expect(editor).to_have_value(re.compile("充电座"))
    await editor.fill(f"机身颜色为{marker}，充电座为白色。")
    await page.get_by_test_id("save-paragraph").click()
    await expect(page.get_by_test_id("paragraph-status")).to_contain_text("已保存")
    await expect(paragraphs.filter(has_text=marker)).to_have_count(1)

    table = paragraphs.filter(has_text=documents.DOCX_TABLE_VALUE)
    await table.get_by_test_id("toggle-paragraph").click()
    await expect(table.get_by_test_id("paragraph-inactive")).to_be_visible()
    await page.screenshot(path=artifacts / "paragraphs.png", full_page=True)

    await hit_test(f"机身颜色{marker}")
    await expect(page.get_by_test_id("hit-result").filter(has_text=marker).first).to_be_visible()
    await hit_test("滤网的保养周期")
    await expect(page.get_by_test_id("hit-result").filter(has_text=documents.DOCX_TABLE_VALUE)).to_have_count(0)
