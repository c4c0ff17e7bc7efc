"""The visitor chat page in either language, in Debian's chromium. An English browser gets the
share page in English: after a question, with the trace and a citation open and the chat list
shown, nothing it shows is Chinese but what the visitor and the knowledge base wrote (the
question, the answer, the documents and their paragraphs, the searches: marked
data-user-content). A Chinese browser gets it in Chinese with no English word but names. On a
Chinese browser ``?lang=en`` gives English, the API calls ask for it, and the header's link
switches the page, its frame address kept, with the conversation still there; another site's
bubble opens the chat in its snippet's ``data-lang``."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page, expect

from gateway.labels import labels_json
from tests.browser.conftest import NewPage
from tests.browser.test_embed_page import host_html, host_policy, host_site, open_bubble, share_token
from tests.harness import Stack
from tests.page_words import CJK, english_words

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
ENGLISH = labels_json("en")
CHINESE = labels_json("zh")
# Everything the page shows of its own: the text of the elements rendered, with what the
# visitor and the knowledge base wrote (data-user-content) and the other language's name on the
# switch (lang) hidden for the reading; and the titles, placeholders and labels of the rest.
SHOWN_WORDS = """() => {
  const style = document.createElement("style");
  style.textContent = "[data-user-content], body [lang] { display: none !important; }";
  document.head.appendChild(style);
  const text = document.body.innerText;
  style.remove();
  const given = "[data-user-content], body [lang]";
  const attributes = [...document.body.querySelectorAll("[title], [placeholder], [aria-label]")]
    .filter((el) => !el.closest(given))
    .flatMap((el) => ["title", "placeholder", "aria-label"].map((name) => el.getAttribute(name) || ""));
  return [text, ...attributes].join("\\n");
}"""


async def share_link(stack: Stack, name: str) -> str:
    async with stack.http() as operator:
        dataset = (await operator.get("/api/dataset")).json()["data"][0]["id"]
        made = await operator.post("/api/application", json={"name": name, "dataset_id_list": [dataset]})
        app_id = made.json()["data"]["id"]
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]
    return f"{stack.url}/ui/share/{link['access_token']}"


async def ask_and_open_everything(page: Page) -> None:
    """Ask, then open the trace, its first citation and the chat list: most of the page's words."""
    await expect(page.get_by_test_id("question-input")).to_be_enabled()
    await page.get_by_test_id("question-input").fill(QUESTION)
    await page.get_by_test_id("send").click()
    record = page.get_by_test_id("record").first
    await expect(record).to_have_attribute("data-status", "answered", timeout=60_000)
    await expect(record.get_by_test_id("votes")).to_be_visible()
    await record.get_by_test_id("trace").locator("> summary").click()
    await expect(record.get_by_test_id("trace-round").first).to_be_visible()
    await record.locator(".citation-item summary").first.click()
    await expect(record.locator(".citation-item .paragraph").first).to_be_visible()
    await page.get_by_test_id("history-toggle").click()
    await expect(page.get_by_test_id("history-item")).to_have_count(1)


async def shown_words(page: Page) -> str:
    words: str = await page.evaluate(SHOWN_WORDS)
    return words


async def test_an_english_browser_reads_the_whole_page_in_english(
    stack: Stack, new_page: NewPage, unique: str, artifacts: Path
) -> None:
    page = await new_page(stack.url, locale="en-US")
    await page.goto(await share_link(stack, f"English page {unique}"))
    assert await page.evaluate("document.documentElement.lang") == "en"
    await ask_and_open_everything(page)
    await expect(page.get_by_test_id("send")).to_have_text(ENGLISH["chat_page"]["send"])
    await expect(page.get_by_test_id("language-switch")).to_have_text("中文")
    await page.screenshot(path=artifacts / "english-share-page.png", full_page=True)

    shown = await shown_words(page)
    assert [line for line in shown.splitlines() if CJK.search(line)] == []
    for word in (
        "Search trace",
        ENGLISH["chat_history"]["title"],
        ENGLISH["trace"]["citations"],
        ENGLISH["votes"]["up"],
    ):
        assert word in shown, word
    assert ENGLISH["stop_reasons"]["sufficient"] in shown or ENGLISH["stop_reasons"]["no_new_evidence"] in shown
    record = page.get_by_test_id("record").first
    assert CJK.search(await record.get_by_test_id("answer").inner_text()), "the answer stays as the documents say it"


async def test_a_chinese_browser_reads_chinese_with_no_english_but_names(
    stack: Stack, new_page: NewPage, unique: str, artifacts: Path
) -> None:
    page = await new_page(stack.url)
    await page.goto(await share_link(stack, f"中文页面 {unique}"))
    assert await page.evaluate("document.documentElement.lang") == "zh-CN"
    await ask_and_open_everything(page)
    await expect(page.get_by_test_id("send")).to_have_text(CHINESE["chat_page"]["send"])
    await page.screenshot(path=artifacts / "chinese-share-page.png", full_page=True)

    shown = await shown_words(page)
    assert english_words(shown) == []
    assert CHINESE["chat_history"]["title"] in shown and "检索轨迹" in shown


async def test_lang_in_the_address_and_the_switch_link_choose_the_language(stack: Stack, new_page: NewPage) -> None:
    page = await new_page(stack.url)  # a Chinese browser
    link = await share_link(stack, "语言切换")
    async with page.expect_request(lambda request: "/api/application/authentication" in request.url) as signing_in:
        await page.goto(f"{link}?lang=en&embed=inline")
    assert await page.evaluate("document.documentElement.lang") == "en"
    assert (await (await signing_in.value).all_headers())["accept-language"] == "en", "the API is asked in English"
    await expect(page.get_by_test_id("send")).to_have_text("Send")
    await expect(page.locator("body")).to_have_class("chat-page embedded")
    await page.get_by_test_id("question-input").fill(QUESTION)
    await page.get_by_test_id("send").click()
    await expect(page.get_by_test_id("record").first).to_have_attribute("data-status", "answered", timeout=60_000)

    await page.get_by_test_id("language-switch").click()
    await page.wait_for_url(f"{link}?embed=inline&lang=zh")
    assert await page.evaluate("document.documentElement.lang") == "zh-CN"
    await expect(page.get_by_test_id("send")).to_have_text("发送")
    await expect(page.get_by_test_id("language-switch")).to_have_text("English")
    await expect(page.get_by_test_id("record")).to_have_count(1)  # the same visitor, the same chat
    trace_summary = page.get_by_test_id("trace").locator("> summary")
    await expect(trace_summary).to_contain_text("检索轨迹")

    await page.get_by_test_id("language-switch").click()
    await page.wait_for_url(f"{link}?embed=inline&lang=en")
    await expect(trace_summary).to_contain_text("Search trace")


async def test_the_bubble_speaks_its_snippets_language_and_its_frame_switches(stack: Stack, browser: Browser) -> None:
    """A Chinese browser on a site whose snippet says ``data-lang="en"``: the bubble is named in
    English and opens the chat in English; the switch inside the panel keeps it a bubble's page."""
    token = await share_token(stack)
    snippet = f'<script src="{stack.url}/ui/embed.js" data-token="{token}" data-lang="en" async></script>'
    with host_site(host_html(stack.url, snippet), host_policy(stack.url)) as host:
        context = await browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
        try:
            page = await context.new_page()
            await page.goto(host)
            await expect(page.locator("[data-kb-embed=button]")).to_have_attribute("aria-label", "Knowledge base Q&A")
            frame = await open_bubble(page)
            assert frame.url.endswith(f"/ui/share/{token}?embed=bubble&lang=en")
            await expect(frame.get_by_test_id("send")).to_have_text("Send")
            await frame.get_by_test_id("language-switch").click()
            await frame.wait_for_url(f"**/ui/share/{token}?embed=bubble&lang=zh")
            await expect(frame.get_by_test_id("send")).to_have_text("发送")
            await expect(frame.locator("body")).to_have_class("chat-page embedded")
        finally:
            await context.close()
