"""The operator page on a phone's width (390 px) in Debian's chromium: nothing makes the page
scroll sideways (wide tables scroll inside their own box), the navigation names every section,
each link reaches its section, and the usage charts and the gap report are there once their
section is opened, with no button pressed."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import OperatorPage
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

WIDTH = 390
# Each section the navigation links to, by the id it jumps to: the operator's (a person signed in
# also gets 个人令牌, which the operator token, being no person, has not).
SECTIONS = ["datasets", "applications", "models", "usage", "log", "gaps", "users", "audit"]


async def test_at_390_px_nothing_scrolls_sideways_and_the_navigation_reaches_every_section(
    stack: Stack, operator_page: OperatorPage, artifacts: Path
) -> None:
    page = await operator_page(stack)
    await page.set_viewport_size({"width": WIDTH, "height": 844})
    await page.goto(f"{stack.url}/ui/admin")
    async with stack.http() as operator:  # a share link to show, copy and embed
        await operator.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={})
    await page.get_by_test_id("application").filter(has_text="示例知识库问答").first.click()
    link = page.get_by_test_id("credential-link-url")
    await expect(link).to_be_visible()
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.url)
    await page.get_by_test_id("credential-link-copy").click()
    assert await page.evaluate("navigator.clipboard.readText()") == await link.text_content()
    await page.get_by_test_id("embed-snippets").locator("> summary").click()
    await page.get_by_test_id("embed-bubble-copy").click()
    assert "/ui/embed.js" in await page.evaluate("navigator.clipboard.readText()")
    wide = await page.evaluate(
        """(width) => {
            // Inside a box that scrolls sideways on its own (a wide table's), width is fine.
            const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true; return false; };
            return [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > width + 0.5 && e.getClientRects().length
                && !(e.parentElement && e.parentElement.getBoundingClientRect().right > width + 0.5)
                && !scrolls(e))
            .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${[...e.classList].join('.')} [${e.dataset.testid || ''}] ${Math.round(e.getBoundingClientRect().right)}`)
            .slice(0, 40); }""",
        WIDTH,
    )
    assert wide == [], f"wider than the screen: {wide}"
    assert await page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    links = page.locator(".topnav a:visible")
    targets = [(await a.get_attribute("href") or "").lstrip("#") for a in await links.all()]
    assert targets == SECTIONS, targets
    assert await page.get_by_test_id("usage-charts").inner_html() == "", "usage loaded before it was opened"
    for target in SECTIONS:
        await page.locator(f'.topnav a[href="#{target}"]').click()
        await expect(page.locator(f"#{target}")).to_be_in_viewport()
        if target == "usage":
            await expect(page.get_by_test_id("usage-charts").locator("svg, table").first).to_be_visible()
        if target == "gaps":
            await expect(page.get_by_test_id("gap-summary").or_(page.get_by_test_id("gap-empty"))).to_be_visible()
    await page.screenshot(path=artifacts / "operator-page-at-390px.png")
