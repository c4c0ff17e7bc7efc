"""The operator page in a real browser: create a dataset, upload a Markdown document with a
progress bar, find it with the hit test (single query and the multi-round loop), delete it."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import NewPage
from tests.harness import Stack

DOCUMENT = """# 青松镇社区食堂管理办法

第一条 青松镇社区食堂为年满七十周岁的老人提供午餐，每餐收费六元。

第二条 社区食堂的营业时间为每日11:00至13:00，节假日照常营业。
"""


async def test_upload_a_document_then_find_it_with_the_hit_test(
    stack: Stack, new_page: NewPage, tmp_path: Path, unique: str, artifacts: Path
) -> None:
    source = tmp_path / "canteen.md"
    source.write_text(DOCUMENT, encoding="utf-8")
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/admin")

    name = f"浏览器测试 {unique}"
    await page.get_by_test_id("dataset-name").fill(name)
    await page.get_by_test_id("create-dataset").click()
    dataset = page.get_by_test_id("dataset").filter(has_text=name)
    await dataset.click()
    await expect(dataset).to_have_attribute("aria-selected", "true")

    await page.get_by_test_id("upload-file").set_input_files(source)
    await page.get_by_test_id("upload").click()
    await expect(page.get_by_test_id("upload-status")).to_contain_text("已导入", timeout=60_000)
    assert await page.get_by_test_id("upload-progress").get_attribute("value") == "100"
    await expect(page.get_by_test_id("document")).to_have_count(1)
    await expect(page.get_by_test_id("document")).to_contain_text("青松镇社区食堂管理办法")

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
    stack: Stack, new_page: NewPage, tmp_path: Path, unique: str
) -> None:
    slides = tmp_path / "slides.txt"
    slides.write_bytes(b"")
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/admin")
    name = f"空文件 {unique}"
    await page.get_by_test_id("dataset-name").fill(name)
    await page.get_by_test_id("create-dataset").click()
    await page.get_by_test_id("dataset").filter(has_text=name).click()
    await page.get_by_test_id("upload-file").set_input_files(slides)
    await page.get_by_test_id("upload").click()
    status = page.get_by_test_id("upload-status")
    await expect(status).not_to_contain_text("上传中", timeout=30_000)
    await expect(status).not_to_contain_text("已导入")
    assert (await status.inner_text()).strip()
    await expect(page.get_by_test_id("document")).to_have_count(0)
