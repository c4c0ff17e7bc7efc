"""MaxKB's embed snippet, pasted as MaxKB's operator page gives it
(``<script async defer src=".../api/application/embed?protocol=…&host=…&token=…">``), puts the
same bubble on another site as our own snippet: the visitor opens it and asks."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Browser, expect

from tests.browser.test_embed_page import (
    QUESTION,
    host_html,
    host_policy,
    host_site,
    new_context,
    open_bubble,
    share_token,
)
from tests.harness import Stack


def maxkb_snippet(gateway: str, token: str) -> str:
    address = urlsplit(gateway)
    return (
        f'<script async defer src="{gateway}/api/application/embed?protocol={address.scheme}'
        f'&host={address.netloc}&token={token}"></script>'
    )


async def test_maxkbs_snippet_opens_the_bubble_and_the_visitor_asks(
    stack: Stack, browser: Browser, tmp_path: Path
) -> None:
    token = await share_token(stack)
    with host_site(host_html(stack.url, maxkb_snippet(stack.url, token)), host_policy(stack.url)) as host:
        context, _ = await new_context(browser, tmp_path / "profile", third_party_storage=True)
        try:
            page = await context.new_page()
            await page.goto(host)
            frame = await open_bubble(page)
            assert f"/ui/share/{token}" in frame.url
            await frame.get_by_test_id("question-input").fill(QUESTION)
            await frame.get_by_test_id("send").click()
            record = frame.get_by_test_id("record").first
            await expect(record).to_have_attribute("data-status", "answered", timeout=60_000)
            assert await page.evaluate("window.__violations") == [], "the bubble broke the host's policy"
        finally:
            await context.close()


async def test_the_snippets_address_refuses_a_token_that_is_not_one(stack: Stack) -> None:
    async with stack.http(anonymous=True) as client:
        good = await client.get("/api/application/embed", params={"protocol": "http", "host": "x", "token": "ab12"})
        assert good.status_code == 200 and good.headers["content-type"].startswith("text/javascript")
        assert good.headers["cross-origin-resource-policy"] == "cross-origin"
        assert good.text == (await client.get("/ui/embed.js")).text
        for params in ({"token": "<script>"}, {}, {"token": "ab12", "protocol": "ftp"}):
            refused = await client.get("/api/application/embed", params=params)
            assert refused.status_code == 400, refused.text
            assert refused.json()["message"].startswith("query."), refused.text
