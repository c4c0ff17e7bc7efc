"""A visitor's own chats on the share page, in Debian's chromium: after three chats the 历史对话
panel lists three, newest first and titled by their first questions; one is renamed and one
deleted from the panel; an earlier chat reopens with its answer and trace; another visitor of
the same link can neither rename nor delete them, and their list does not show them."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.async_api import Locator, Page, expect

from kbcore.rpc.caller_token import bearer
from tests.browser.conftest import NewPage
from tests.harness import Stack

QUESTIONS = [
    "云岭县人民医院ICU每天的探视时间是几点到几点？",
    "云岭县图书馆持少儿读者证每次可以借几册？",
    "星澜科技员工出差住宿标准是多少？",
]


async def ask_in_a_new_chat(page: Page, question: str, first: bool) -> None:
    if not first:
        await page.get_by_test_id("new-chat").click()
        await expect(page.get_by_test_id("record")).to_have_count(0)
    await page.get_by_test_id("question-input").fill(question)
    await page.get_by_test_id("send").click()
    record = page.get_by_test_id("record").first
    await expect(record.get_by_test_id("record-question")).to_have_text(question)
    await expect(record).to_have_attribute("data-status", "answered", timeout=60_000)


async def titles(page: Page) -> list[str]:
    return await page.get_by_test_id("history-open").all_inner_texts()


def item(page: Page, title: str) -> Locator:
    return page.get_by_test_id("history-item").filter(has_text=title)


async def test_three_chats_listed_renamed_deleted_reopened_and_kept_from_another_visitor(
    stack: Stack, new_page: NewPage, artifacts: Path
) -> None:
    async with stack.http() as operator:
        dataset = (await operator.get("/api/dataset")).json()["data"][0]["id"]
        made = await operator.post("/api/application", json={"name": "历史对话测试", "dataset_id_list": [dataset]})
        app_id = made.json()["data"]["id"]
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]
        other = (
            await operator.post("/api/application/authentication", json={"access_token": link["access_token"]})
        ).json()["data"]

    page = await new_page(stack.url)
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(f"{stack.url}/ui/share/{link['access_token']}")
    for index, question in enumerate(QUESTIONS):
        await ask_in_a_new_chat(page, question, index == 0)

    await page.get_by_test_id("history-toggle").click()
    await expect(page.get_by_test_id("history-item")).to_have_count(3)
    assert await titles(page) == list(reversed(QUESTIONS)), "newest first, titled by the first question"
    await expect(item(page, QUESTIONS[2])).to_have_class("history-item current")
    await page.screenshot(path=artifacts / "history-at-390px.png")
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390, "the page scrolls sideways"

    await item(page, QUESTIONS[0]).get_by_test_id("history-rename").click()
    await page.get_by_test_id("history-title-input").fill("医院探视时间")
    await page.get_by_test_id("history-save").click()
    await expect(page.get_by_test_id("history-open")).to_have_text([QUESTIONS[2], QUESTIONS[1], "医院探视时间"])
    await item(page, QUESTIONS[1]).get_by_test_id("history-delete").click()  # the context accepts the confirm
    await expect(page.get_by_test_id("history-item")).to_have_count(2)
    assert await titles(page) == [QUESTIONS[2], "医院探视时间"]

    await item(page, "医院探视时间").get_by_test_id("history-open").click()
    await expect(page.get_by_test_id("history")).to_be_hidden()  # narrow screen: the panel closes
    reopened = page.get_by_test_id("record")
    await expect(reopened).to_have_count(1)
    await expect(reopened.get_by_test_id("record-question")).to_have_text(QUESTIONS[0])
    assert "16:00" in await reopened.get_by_test_id("answer").inner_text()
    await expect(reopened.get_by_test_id("trace")).to_have_count(1)

    mine = page.get_by_test_id("history-item")
    async with stack.http(headers=bearer(other)) as stranger:
        theirs = (await stranger.get(f"/api/application/{app_id}/chat/client/1/20")).json()["data"]
        assert theirs["records"] == [], "another visitor sees none of these chats"
        await page.get_by_test_id("history-toggle").click()
        for chat_id in [await entry.get_attribute("data-chat-id") for entry in await mine.all()]:
            path = f"/api/application/{app_id}/chat/client/{chat_id}"
            renamed: httpx.Response = await stranger.put(path, json={"abstract": "被改了"})
            deleted: httpx.Response = await stranger.delete(path)
            assert renamed.status_code == deleted.status_code == 404, (renamed.text, deleted.text)
    await page.reload()
    await page.get_by_test_id("history-toggle").click()
    await expect(page.get_by_test_id("history-open")).to_have_text([QUESTIONS[2], "医院探视时间"])
