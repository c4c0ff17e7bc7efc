"""A share link limited to a list of sites, in Debian's chromium: a site on the list shows the
chat in its frame; a site not on it gets an empty frame (the page's frame-ancestors, which the
browser enforces), whatever its own page does. The operator sets the list on the operator page,
and a line that is not a site is refused with its sentence, the list kept as it was."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import OperatorPage
from tests.browser.test_embed_page import chat_frame, host_html, host_policy, host_site, new_context
from tests.e2e.test_share_link_rotation_http import new_link, put_link, shown_link
from tests.eventually import eventually
from tests.harness import Stack

BLOCKED_FRAME = "chrome-error://chromewebdata/"


def inline(stack: Stack, token: str) -> str:
    return f'<iframe src="{stack.url}/ui/share/{token}?embed=inline" title="chat" width="600" height="640"></iframe>'


async def frame_address(page: Page) -> str:
    handle = await page.locator("iframe").element_handle()
    frame = await handle.content_frame()
    return frame.url if frame is not None else ""


async def test_a_listed_site_shows_the_chat_and_another_site_gets_an_empty_frame(
    stack: Stack, browser: Browser, tmp_path: Path, unique: str
) -> None:
    app_id, link = await new_link(stack, f"embed-sites-{unique}")
    token = link["access_token"]
    with host_site(host_html(stack.url, inline(stack, token)), host_policy(stack.url)) as host:
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(host))
        context, _ = await new_context(browser, tmp_path / "profile", third_party_storage=True)
        try:
            listed = await put_link(stack, app_id, {"white_active": True, "white_list": [origin]})
            assert listed.status_code == 200, listed.text
            page = await context.new_page()
            await page.goto(host)
            frame = await chat_frame(page, "iframe")
            await expect(frame.get_by_test_id("question-input")).to_be_visible()

            elsewhere = await put_link(stack, app_id, {"white_list": ["https://shop.example.com"]})
            assert elsewhere.status_code == 200, elsewhere.text
            await page.reload()
            assert await eventually(lambda: frame_address(page), lambda url: url == BLOCKED_FRAME, timeout=15)
        finally:
            await context.close()


async def test_the_operator_limits_the_sites_on_the_operator_page(
    stack: Stack, operator_page: OperatorPage, unique: str
) -> None:
    name = f"embed-sites-page-{unique}"
    app_id, _ = await new_link(stack, name)
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    await page.get_by_test_id("application").filter(has_text=name).first.click()
    await page.get_by_test_id("embed-snippets").locator("> summary").click()
    await page.get_by_test_id("link-sites-limited").check()
    await page.get_by_test_id("link-sites").fill("https://Shop.example.com/\n\n*.example.org")
    await page.get_by_test_id("save-link-sites").click()
    await expect(page.get_by_test_id("credentials-status")).to_have_text("已保存。")
    shown = await shown_link(stack, app_id)
    assert (shown["white_active"], shown["white_list"]) == (True, ["https://shop.example.com", "*.example.org"])

    await page.get_by_test_id("embed-snippets").locator("> summary").click()
    await page.get_by_test_id("link-sites").fill("https://shop.example.com/checkout")
    await page.get_by_test_id("save-link-sites").click()
    await expect(page.get_by_test_id("credentials-status")).to_contain_text("不是网站")
    assert (await shown_link(stack, app_id))["white_list"] == ["https://shop.example.com", "*.example.org"]
