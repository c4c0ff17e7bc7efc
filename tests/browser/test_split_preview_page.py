"""The split preview on the operator page: a file is previewed under the default rules, the
rules are adjusted (a maximum length, a separator) and previewed again, an unused separator is
named, and the upload with those rules imports exactly the paragraphs the last preview showed."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import OperatorPage, new_dataset_selected
from tests.harness import Stack

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "kb" / "docs" / "xinglan_leave_policy.md"


async def test_preview_adjust_and_import_with_the_same_paragraphs(
    stack: Stack, operator_page: OperatorPage, tmp_path: Path, unique: str, artifacts: Path
) -> None:
    source = tmp_path / "leave.md"
    source.write_bytes(SAMPLE.read_bytes())
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    name = f"分段预览 {unique}"
    await new_dataset_selected(page, name)
    await page.get_by_test_id("upload-file").set_input_files(source)

    await page.get_by_test_id("split-rules").locator("summary").click()
    await page.get_by_test_id("split-preview").click()
    total = page.get_by_test_id("split-preview-total")
    await expect(total).to_contain_text("共")
    default_count = int(await total.get_attribute("data-total") or 0)
    assert default_count > 0

    await page.get_by_test_id("split-max-length").fill("60")
    await page.get_by_test_id("split-separators").fill("。 §§")
    await page.get_by_test_id("split-preview").click()
    await expect(total).not_to_have_attribute("data-total", str(default_count))
    await expect(total).to_contain_text('"§§"')
    adjusted = int(await total.get_attribute("data-total") or 0)
    assert adjusted > default_count
    shown = [text.strip() for text in await page.get_by_test_id("split-paragraph").all_inner_texts()]
    assert len(shown) == adjusted
    await page.locator(".upload-box").screenshot(path=artifacts / "split-preview.png")

    await page.get_by_test_id("upload").click()
    await expect(page.get_by_test_id("document-status")).to_have_text("已就绪", timeout=60_000)
    await expect(page.get_by_test_id("document")).to_contain_text(f"{adjusted} 个段落")
    async with stack.http() as client:
        datasets = (await client.get("/api/dataset")).json()["data"]
        dataset_id = next(d["id"] for d in datasets if d["name"] == name)
        [document] = (await client.get(f"/api/dataset/{dataset_id}/document")).json()["data"]
        records = (await client.get(f"/api/dataset/{dataset_id}/document/{document['id']}/paragraph/1/200")).json()
        imported = [f"{p['title']}\n{p['content']}".strip() for p in records["data"]["records"]]
        assert imported == shown, "the paragraphs imported are the ones previewed"
        await client.delete(f"/api/dataset/{dataset_id}")
