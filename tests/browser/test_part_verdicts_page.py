"""The chat page's trace marks each part of the question with the verdict the record carries,
in words (no glyph), one line per part."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from gateway.labels import PART_VERDICT_LABELS
from tests.browser.conftest import OperatorPage, saved_record
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

# Annual leave is in the sample knowledge base, a year-end bonus is not.
COMPOUND = "星澜科技员工入职满一年后每年有几天带薪年假？公司的年终奖一般发几个月工资？"


async def test_the_trace_shows_each_part_with_its_verdict(
    stack: Stack, operator_page: OperatorPage, artifacts: Path
) -> None:
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    await page.get_by_test_id("question-input").fill(COMPOUND)
    await page.get_by_test_id("send").click()
    record = page.get_by_test_id("record").last
    await expect(record).to_have_attribute("data-status", "answered", timeout=60_000)

    saved = await saved_record(page, record, stack)
    assert len(saved["parts"]) == 2, saved["parts"]

    trace = record.get_by_test_id("trace")
    await trace.locator("> summary").click()
    lines = trace.get_by_test_id("part")
    await expect(lines).to_have_count(2)
    assert [await line.get_attribute("data-verdict") for line in await lines.all()] == [
        p["verdict"] for p in saved["parts"]
    ]
    assert await trace.get_by_test_id("part-verdict").all_inner_texts() == [
        PART_VERDICT_LABELS[p["verdict"]] for p in saved["parts"]
    ]
    texts = await lines.all_inner_texts()
    assert all(p["part"] in text for p, text in zip(saved["parts"], texts, strict=True)), texts
    await trace.screenshot(path=artifacts / "part-verdicts.png")
