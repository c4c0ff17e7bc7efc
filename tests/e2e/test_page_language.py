"""The pages' words over HTTP come in the reader's language: ``?lang=`` first, else the
browser's ``Accept-Language``, else Chinese; the chat page itself is served filled in that
language, and both tell caches that the answer depends on the header."""

from __future__ import annotations

import httpx

from tests.harness import Stack

ENGLISH_BROWSER = {"Accept-Language": "en-US,en;q=0.9"}
CHINESE_BROWSER = {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.8"}


async def without_language(client: httpx.AsyncClient, path: str) -> httpx.Response:
    """GET ``path`` with no Accept-Language header at all."""
    request = client.build_request("GET", path)
    del request.headers["accept-language"]
    return await client.send(request)


def varies_by_language(reply: httpx.Response) -> bool:
    return "accept-language" in [v.strip().lower() for v in reply.headers.get("vary", "").split(",")]


async def test_labels_follow_lang_then_accept_language_then_chinese(stack: Stack) -> None:
    async with stack.http(anonymous=True, headers=ENGLISH_BROWSER) as english:
        by_header = await english.get("/ui/labels.json")
        lang_beats_header = await english.get("/ui/labels.json", params={"lang": "zh"})
        unknown_lang = await english.get("/ui/labels.json", params={"lang": "fr"})
        unheaded = await without_language(english, "/ui/labels.json")
    for reply in (by_header, lang_beats_header, unknown_lang, unheaded):
        assert reply.status_code == 200, reply.text
        assert varies_by_language(reply), reply.headers
    assert by_header.json()["stop_reasons"]["no_new_evidence"] == "No new evidence found"
    assert by_header.json()["chat_page"]["send"] == "Send" and by_header.headers["content-language"] == "en"
    assert lang_beats_header.json()["stop_reasons"]["no_new_evidence"] == "未发现新增资料"
    assert unknown_lang.json()["chat_page"]["send"] == "Send", "an unknown ?lang= leaves the choice to the header"
    assert unheaded.json()["chat_page"]["send"] == "发送", "no preference at all reads Chinese"
    assert set(unheaded.json()) == set(by_header.json())


async def test_the_chat_page_is_served_in_the_readers_language(stack: Stack) -> None:
    async with stack.http(anonymous=True, headers=CHINESE_BROWSER) as chinese:
        share = await chinese.get("/ui/share/0123456789abcdef")
        share_in_english = await chinese.get("/ui/share/0123456789abcdef", params={"lang": "en", "embed": "bubble"})
        keyed = await without_language(chinese, "/ui/chat/some-app")
    assert share.status_code == share_in_english.status_code == keyed.status_code == 200
    assert all(varies_by_language(reply) for reply in (share, share_in_english, keyed))
    assert '<html lang="zh-CN">' in share.text and ">发送</button>" in share.text
    assert '<html lang="en">' in share_in_english.text and ">Send</button>" in share_in_english.text
    assert 'href="?embed=bubble&amp;lang=zh"' in share_in_english.text, "the way back keeps the frame's address"
    assert '<html lang="zh-CN">' in keyed.text
    assert "frame-ancestors *" in share_in_english.headers["content-security-policy"], "the share page stays framable"
    assert "script-src 'self';" in share.headers["content-security-policy"]
