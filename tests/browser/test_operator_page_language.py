"""The operator page in either language, in Debian's chromium. An English browser gets it in
English: with the sample knowledge base selected (its documents, a document's paragraphs, a
retrieval test), the sample application open, and each section of the navigation visited (the
models, the usage charts, the conversation log with a record in it, the knowledge gaps, the
people, the audit), nothing it shows is Chinese but what people and the knowledge base wrote
(names, paragraphs, questions and answers: marked data-user-content). A Chinese browser gets it
in Chinese with no English word but names; the header's link switches the language."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from gateway.labels import labels_json
from kbcore.rpc.caller_token import operator_token
from tests.browser.conftest import NewPage, sign_in_tab
from tests.harness import Stack
from tests.page_words import CJK, english_words
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

QUESTION = "员工年假有几天？"
ENGLISH = labels_json("en")
CHINESE = labels_json("zh")
# The sections the navigation links to, in the order a reader visits them.
SECTIONS = ["datasets", "applications", "models", "usage", "log", "gaps", "users", "audit"]
# What the page shows of its own, as the chat page's test reads it (tests/browser/
# test_chat_page_language.py), and a select showing a name (an application's) hidden too; each
# line says which element it came from, for a failure to name it.
SHOWN_WORDS = """() => {
  const given = "[data-user-content], body [lang], select:has(> option[data-user-content]:checked)";
  const style = document.createElement("style");
  style.textContent = given + " { display: none !important; }";
  document.head.appendChild(style);
  const where = (el) => `${el.tagName.toLowerCase()}#${el.id}[${el.dataset.testid || ""}]`;
  const texts = [...document.body.querySelectorAll("*")]
    .filter((el) => el.checkVisibility() && !el.closest(given))
    .flatMap((el) => [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim())
      .map((n) => `${n.textContent.trim()} <${where(el)}>`));
  style.remove();
  const attributes = [...document.body.querySelectorAll("[title], [placeholder], [aria-label]")]
    .filter((el) => !el.closest(given))
    .flatMap((el) => ["title", "placeholder", "aria-label"].map((name) => `${el.getAttribute(name) || ""} <${where(el)}>`));
  return [...texts, ...attributes].join("\\n");
}"""


async def a_logged_question(stack: Stack) -> None:
    """One question to the sample application, so the log and the usage have a record."""
    async with stack.http() as operator:
        chat_id = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, _ = await ask(operator, chat_id, QUESTION)
        assert response.status_code == 200


async def open_signed_in(stack: Stack, new_page: NewPage, locale: str) -> Page:
    page = await new_page(stack.url, locale=locale)
    await sign_in_tab(page, operator_token(stack.settings))
    await page.goto(f"{stack.url}/ui/admin")
    await expect(page.get_by_test_id("account")).to_be_visible()
    return page


async def open_everything(page: Page, shots: Path | None) -> list[str]:
    """Open what the sections show, section by section; each section's shown words (and its
    screenshot at 1280 px in ``shots``, when given)."""
    shown: list[str] = []
    await page.locator(f'[data-testid=dataset][data-id="{DEMO_DATASET_ID}"]').click()
    await expect(page.get_by_test_id("document").first).to_be_visible()
    await page.get_by_test_id("open-paragraphs").first.click()
    await expect(page.get_by_test_id("doc-paragraph").first).to_be_visible()
    await page.get_by_test_id("hit-query").fill(QUESTION)
    await page.get_by_test_id("hit-run").click()
    await expect(page.locator("#hit-results .hit-list").first).to_be_visible()
    await page.get_by_test_id("application").filter(has_text="示例知识库问答").first.click()
    await expect(page.get_by_test_id("credentials")).to_be_visible()
    for section in SECTIONS:
        await page.locator(f'.topnav a[href="#{section}"]').click()
        await expect(page.locator(f"#{section}")).to_be_in_viewport()
        if section == "usage":
            await expect(page.get_by_test_id("usage-charts").locator("svg, table").first).to_be_visible()
        if section == "log":
            await expect(page.get_by_test_id("log-row").first).to_be_visible()
            await page.get_by_test_id("log-row").first.get_by_test_id("log-open").click()
            await expect(page.get_by_test_id("log-detail").get_by_test_id("record-question")).to_be_visible()
        if section == "gaps":
            await expect(page.get_by_test_id("gap-summary").or_(page.get_by_test_id("gap-empty"))).to_be_visible()
        if section == "audit":
            await expect(page.get_by_test_id("audit-row").first).to_be_visible()
        if shots:
            await page.screenshot(path=shots / f"operator-en-{section}.png")
        shown.append(await page.evaluate(SHOWN_WORDS))
    return shown


async def test_an_english_browser_reads_the_operator_page_in_english(
    stack: Stack, new_page: NewPage, artifacts: Path
) -> None:
    await a_logged_question(stack)
    page = await open_signed_in(stack, new_page, "en-US")
    assert await page.evaluate("document.documentElement.lang") == "en"
    await expect(page.locator("h1")).to_have_text(ENGLISH["admin_page"]["title"])
    await expect(page.get_by_test_id("language-switch")).to_have_text("中文")
    everything = await open_everything(page, artifacts)
    for section, shown in zip(SECTIONS, everything, strict=True):
        chinese = [line for line in shown.splitlines() if CJK.search(line.rsplit(" <", 1)[0])]
        assert chinese == [], f"{section}: {chinese}"
    for word in (ENGLISH["admin_page"]["datasets"], ENGLISH["admin_page"]["log"], ENGLISH["models"]["title"]):
        assert word in everything[-1], word
    await page.screenshot(path=artifacts / "operator-en-full.png", full_page=True)


async def test_a_chinese_browser_reads_the_operator_page_in_chinese_and_can_switch(
    stack: Stack, new_page: NewPage, artifacts: Path
) -> None:
    await a_logged_question(stack)
    page = await open_signed_in(stack, new_page, "zh-CN")
    assert await page.evaluate("document.documentElement.lang") == "zh-CN"
    for section, shown in zip(SECTIONS, await open_everything(page, None), strict=True):
        english = [line for line in shown.splitlines() if english_words(line.rsplit(" <", 1)[0].replace("English", ""))]
        assert english == [], f"{section}: {english}"
    await page.screenshot(path=artifacts / "chinese-operator-page.png")

    await page.get_by_test_id("language-switch").click()
    await expect(page.locator("html")).to_have_attribute("lang", "en")
    await expect(page.locator("h1")).to_have_text(ENGLISH["admin_page"]["title"])
    assert page.url.endswith("?lang=en")
    await expect(page.get_by_test_id("account")).to_be_visible()  # still signed in
    await expect(page.get_by_test_id("language-switch")).to_have_text("中文")
