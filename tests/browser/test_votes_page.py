"""Votes on the chat page and usage charts on the operator page, in a real browser: a visitor
of a share link votes 👎 with a reason (a small form, no dialog), the vote is still there after
a reload and can be changed; the operator sees that day's figures drawn as charts."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import NewPage, OperatorPage
from tests.browser.test_chat_page import ask, finished
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院普通病区工作日的探视时间是几点到几点？"
REASON = "没有说明周末的探视时间"


async def test_a_visitor_votes_down_with_a_reason_and_the_vote_survives_a_reload(
    stack: Stack, new_page: NewPage, operator_page: OperatorPage, artifacts: Path
) -> None:
    async with stack.http() as client:
        token = (await client.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={})).json()["data"]
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/share/{token['access_token']}")
    record = await finished(await ask(page, QUESTION))
    votes = record.get_by_test_id("votes")
    await expect(votes).to_have_attribute("data-vote", "-1")

    await votes.get_by_test_id("vote-down").click()
    form = votes.get_by_test_id("vote-reason-form")
    await expect(form).to_be_visible()
    await votes.get_by_test_id("vote-reason").fill(REASON)
    await votes.get_by_test_id("vote-reason-send").click()
    await expect(votes).to_have_attribute("data-vote", "1")
    await expect(form).to_be_hidden()
    await expect(votes.get_by_test_id("vote-state")).to_contain_text(REASON)
    await expect(votes.get_by_test_id("vote-down")).to_have_attribute("aria-pressed", "true")
    await page.screenshot(path=artifacts / "voted-down.png", full_page=True)

    await page.reload()
    again = page.get_by_test_id("record").first
    await finished(again)
    votes = again.get_by_test_id("votes")
    await expect(votes).to_have_attribute("data-vote", "1")
    await expect(votes.get_by_test_id("vote-state")).to_contain_text(REASON)
    await expect(votes.get_by_test_id("vote-up")).to_have_attribute("aria-pressed", "false")

    await votes.get_by_test_id("vote-up").click()  # a change of mind, without cancelling first
    await expect(votes).to_have_attribute("data-vote", "0")
    await page.reload()
    await expect(page.get_by_test_id("record").first.get_by_test_id("votes")).to_have_attribute("data-vote", "0")

    # The operator's usage section draws today's question and its vote.
    admin = await operator_page(stack)
    await admin.goto(f"{stack.url}/ui/admin")
    await admin.get_by_test_id("usage-app").select_option(DEMO_APPLICATION_ID)
    await admin.get_by_test_id("usage-show").click()
    questions = admin.get_by_test_id("usage-questions")
    await expect(questions.locator("svg rect")).not_to_have_count(0)
    await expect(admin.get_by_test_id("usage-votes").locator("svg rect")).not_to_have_count(0)
    for chart in ("usage-outcomes", "usage-tokens", "usage-times", "usage-rounds", "usage-insufficient"):
        await expect(admin.get_by_test_id(chart).locator("svg")).to_have_count(1)
    await admin.get_by_test_id("usage-charts").screenshot(path=artifacts / "usage.png")
