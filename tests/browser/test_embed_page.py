"""The chat bubble on another site, in Debian's chromium: a page served from a second origin on
loopback (``localhost`` against the gateway's ``127.0.0.1``, so another site) with a strict
content security policy of its own loads ``/ui/embed.js`` by the snippet the operator page
offers. A visitor opens the bubble, asks, reloads the host page and finds the earlier chat; the
host page's own script cannot read the chat's DOM, its storage or the visitor's token, and
nothing the bubble does breaks the host's policy. Where the browser blocks the chat's storage,
the chat says that it will not be kept."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, BrowserContext, Frame, Page, expect

from tests.browser.conftest import CHROMIUM, CHROMIUM_FLAGS, OperatorPage
from tests.harness import Stack
from tests.web_site import serve_site
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
# Every policy violation in any frame, kept where a test can read it.
VIOLATIONS = (
    "window.__violations = [];"
    "document.addEventListener('securitypolicyviolation',"
    " (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));"
)


def host_html(gateway: str, snippet: str) -> str:
    return (
        "<!doctype html><html lang='zh-CN'><head><meta charset='utf-8'><title>另一个网站</title></head>"
        f"<body><h1>另一个网站</h1><p id='own'>网站自己的内容</p>{snippet}</body></html>"
    )


def host_policy(gateway: str) -> str:
    """A strict policy such a site might send: nothing but the gateway's script and frame,
    no styles of any kind, and Trusted Types required (no HTML strings into the DOM)."""
    return (
        f"default-src 'none'; script-src {gateway}; frame-src {gateway}; style-src 'none'; img-src 'none'; "
        "connect-src 'none'; base-uri 'none'; form-action 'none'; require-trusted-types-for 'script'"
    )


@contextmanager
def host_site(html: str, policy: str) -> Iterator[str]:
    """One page at ``http://localhost:<port>/`` (another site than the gateway's 127.0.0.1)
    with ``policy`` as its Content-Security-Policy."""
    with serve_site({"/": html}, headers={"Content-Security-Policy": policy}) as (_, url):
        yield url.replace("127.0.0.1", "localhost")


async def share_token(stack: Stack) -> str:
    async with stack.http() as client:
        made = await client.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={})
        assert made.status_code == 200, made.text
        link = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/access_token")).json()["data"]
        if not link["is_active"]:  # another test switched it off
            on = await client.put(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={"is_active": True})
            assert on.status_code == 200, on.text
        return str(made.json()["data"]["access_token"])


async def snippet_from_operator_page(stack: Stack, operator_page: OperatorPage) -> str:
    """The bubble snippet as the operator copies it from the application's 访问凭据."""
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    await page.get_by_test_id("application").filter(has_text="示例知识库问答").first.click()
    snippets = page.get_by_test_id("embed-snippets")
    await snippets.locator("> summary").click()
    return await page.get_by_test_id("embed-bubble").input_value()


async def new_context(
    browser: Browser, profile: Path, *, third_party_storage: bool
) -> tuple[BrowserContext, list[str]]:
    """A browser profile of its own, as a person's browser has, whose setting for third-party
    cookies (which rules third-party storage too) is ``third_party_storage``: Chromium 156 blocks
    them unless told otherwise, and so does an incognito window. The context records its
    requests and every frame's policy violations."""
    (profile / "Default").mkdir(parents=True)
    controls = 0 if third_party_storage else 1  # chromium://settings/cookies: allow / block third-party
    preferences = {"profile": {"cookie_controls_mode": controls, "block_third_party_cookies": not third_party_storage}}
    (profile / "Default" / "Preferences").write_text(json.dumps(preferences))
    context = await browser.browser_type.launch_persistent_context(
        profile,
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_FLAGS,
        viewport={"width": 1280, "height": 900},
        locale="zh-CN",
    )
    context.set_default_timeout(30_000)
    urls: list[str] = []
    context.on("request", lambda request: urls.append(request.url))
    await context.add_init_script(script=VIOLATIONS)
    return context, urls


async def chat_frame(page: Page, selector: str) -> Frame:
    """The chat page inside the host's iframe, once it has loaded."""
    handle = await page.locator(selector).element_handle()
    frame = await handle.content_frame()
    assert frame is not None
    await frame.wait_for_url("**/ui/share/**")
    await frame.wait_for_load_state()
    return frame


async def open_bubble(page: Page) -> Frame:
    button = page.locator("[data-kb-embed=button]")
    await expect(button).to_have_attribute("aria-expanded", "false")
    await button.click()
    await expect(button).to_have_attribute("aria-expanded", "true")
    await expect(page.locator("[data-kb-embed=panel] iframe")).to_be_visible()
    return await chat_frame(page, "[data-kb-embed=panel] iframe")


async def host_reach(page: Page) -> dict[str, Any]:
    """What the host page's own script gets when it reaches for the chat."""
    reach: dict[str, Any] = await page.evaluate(
        """() => {
            const frame = document.querySelector('[data-kb-embed=panel] iframe');
            const attempt = (f) => { try { f(); return 'read'; } catch (e) { return e.name; } };
            return {
                contentDocument: frame.contentDocument === null ? 'null' : 'a document',
                document: attempt(() => frame.contentWindow.document.body.innerHTML),
                storage: attempt(() => frame.contentWindow.localStorage.length),
                mine: JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie,
                dom: document.documentElement.outerHTML,
                globals: Object.keys(window).join(','),
            };
        }"""
    )
    return reach


async def test_the_bubble_on_another_site_with_a_strict_policy_keeps_the_visitor_and_hides_the_chat_from_the_host(
    stack: Stack, browser: Browser, operator_page: OperatorPage, artifacts: Path, tmp_path: Path
) -> None:
    token = await share_token(stack)
    snippet = await snippet_from_operator_page(stack, operator_page)
    assert f'data-token="{token}"' in snippet and f"{stack.url}/ui/embed.js" in snippet, snippet
    with host_site(host_html(stack.url, snippet), host_policy(stack.url)) as host:
        context, urls = await new_context(browser, tmp_path / "profile", third_party_storage=True)
        try:
            page = await context.new_page()
            await page.goto(host)
            frame = await open_bubble(page)
            await frame.get_by_test_id("question-input").fill(QUESTION)
            await frame.get_by_test_id("send").click()
            record = frame.get_by_test_id("record").first
            await expect(record).to_have_attribute("data-status", "answered", timeout=60_000)
            assert "16:00" in await record.get_by_test_id("answer").inner_text()
            await page.screenshot(path=artifacts / "host-page-with-the-bubble-open.png")

            visitor = await frame.evaluate(f"localStorage.getItem('kb.visitor.{token}')")
            assert visitor, "the chat keeps its visitor token in its own storage"
            reach = await host_reach(page)
            assert reach["contentDocument"] == "null"
            assert reach["document"] == "SecurityError" and reach["storage"] == "SecurityError", reach
            for seen in ("mine", "dom", "globals"):
                assert visitor not in reach[seen], f"the host page can read the visitor's token ({seen})"
            assert QUESTION not in reach["dom"], "the chat's DOM is in the host page"

            await page.reload()
            frame = await open_bubble(page)
            again = frame.get_by_test_id("record")
            await expect(again).to_have_count(1)
            await expect(again.first.get_by_test_id("record-question")).to_have_text(QUESTION)
            await expect(again.first).to_have_attribute("data-status", "answered")
            assert await frame.evaluate(f"localStorage.getItem('kb.visitor.{token}')") == visitor

            assert await page.evaluate("window.__violations") == [], "the bubble broke the host's policy"
            assert await frame.evaluate("window.__violations") == []
            elsewhere = [u for u in urls if not u.startswith((host + "/", stack.url + "/"))]
            assert not elsewhere, f"requests to neither the host nor the gateway: {elsewhere}"
        finally:
            await context.close()


async def test_an_inline_frame_in_a_browser_that_blocks_third_party_storage_says_the_chat_will_not_be_kept(
    stack: Stack, browser: Browser, tmp_path: Path
) -> None:
    token = await share_token(stack)
    inline = (
        f'<iframe src="{stack.url}/ui/share/{token}?embed=inline" title="知识库问答" width="600" height="640"></iframe>'
    )
    with host_site(host_html(stack.url, inline), host_policy(stack.url)) as host:
        context, _ = await new_context(browser, tmp_path / "profile", third_party_storage=False)
        try:
            page = await context.new_page()
            await page.goto(host)
            frame = await chat_frame(page, "iframe")
            await expect(frame.get_by_test_id("app-name")).not_to_have_text("知识库问答")  # signed in, app loaded
            notice = frame.get_by_test_id("storage-notice")
            await expect(notice).to_be_visible()
            assert "刷新页面后会从新对话开始" in await notice.inner_text()
            await expect(frame.get_by_test_id("question-input")).to_be_enabled()  # it still answers
            own_tab = notice.get_by_test_id("open-in-own-tab")
            assert await own_tab.get_attribute("href") == f"{stack.url}/ui/share/{token}"
            assert await own_tab.get_attribute("target") == "_blank"
        finally:
            await context.close()
