"""On the pages: Stop during a retrieval round ends the answer at once (no waiting on a
timeout); the regenerate button under the last answer asks again in its place (the old record
stays in the log); and a paragraph's score is named by the search that produced it, so a hybrid
rank-fusion score is never called 相似度."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from gateway.labels import SCORE_LABELS
from services.retrieval.embedding.embedders import Embedder
from tests.browser.conftest import OperatorPage
from tests.browser.test_chat_page import ask, finished
from tests.harness import Stack
from tests.slow_search import SlowSearchEmbedder, start_slow_search_stack
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
DEMO_DATASET = "示例知识库"


@pytest.fixture
async def slow_search(
    stack: Stack, sessions: Any, store: Any, embedder: Embedder, offline_model: Any
) -> AsyncIterator[tuple[Stack, SlowSearchEmbedder]]:
    running, slow = await start_slow_search_stack(stack, sessions, store, embedder, offline_model)
    yield running, slow
    await running.stop()


async def test_stop_during_a_slow_retrieval_round_ends_the_answer_within_a_second(
    slow_search: tuple[Stack, SlowSearchEmbedder], operator_page: OperatorPage, artifacts: Path
) -> None:
    running, slow = slow_search
    page = await operator_page(running)
    await page.goto(f"{running.url}/ui/chat/{DEMO_APPLICATION_ID}")
    await expect(page.get_by_test_id("app-name")).not_to_be_empty()
    record = await ask(page, QUESTION)
    await expect(record.get_by_test_id("progress-step").filter(has_text="第 1 轮检索")).to_have_count(1)
    # The progress line can reach the page before the search task has embedded its query (on
    # PostgreSQL the search reads the database first): wait for it, briefly, rather than race it.
    await asyncio.wait_for(slow.searching.wait(), timeout=5)  # round 1 is searching; it never ends by itself

    began = time.monotonic()
    await page.get_by_test_id("stop").click()
    await expect(record).to_have_attribute("data-status", "stopped", timeout=5_000)
    elapsed = time.monotonic() - began
    # The stream ended within a second and the page re-read the saved record; before, the page
    # waited 8 s for a stream the server never ended, then cut it.
    assert elapsed < 1.5, f"the answer was shown stopped {elapsed:.2f} s after the click"
    await expect(record.get_by_test_id("stopped-marker")).to_be_visible()
    await expect(page.get_by_test_id("send")).to_be_enabled()
    await page.screenshot(path=artifacts / "stopped-in-retrieval.png", full_page=True)

    record_id = await record.get_attribute("data-record-id")
    chat_id = await page.evaluate("() => Object.entries(localStorage).find(([k]) => k.startsWith('kb.chat.'))[1]")
    async with running.http() as client:
        url = f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/{record_id}"
        saved = (await client.get(url)).json()["data"]
    assert saved["status"] == "stopped" and saved["error"] == "stopped by the user", saved
    assert [r["queries"] for r in saved["agent_trace"]] == [[QUESTION]], "the round that was searching is kept"


async def test_regenerate_asks_the_last_question_again_in_place_of_its_answer(
    stack: Stack, operator_page: OperatorPage
) -> None:
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    await expect(page.get_by_test_id("app-name")).not_to_be_empty()
    first = await finished(await ask(page, "云岭县人民医院普通病区工作日的探视时间是几点到几点？"))
    last = await finished(await ask(page, QUESTION))
    await expect(first.get_by_test_id("regenerate")).to_have_count(0)  # only the last answer has one
    old_id = await last.get_attribute("data-record-id")

    await last.get_by_test_id("regenerate").click()
    records = page.get_by_test_id("record")
    await expect(records).to_have_count(2)  # replaced, not added
    renewed = records.nth(1)
    await expect(renewed).not_to_have_attribute("data-record-id", old_id or "")
    await finished(renewed)
    await expect(renewed.get_by_test_id("record-question")).to_have_text(QUESTION)
    await expect(renewed.get_by_test_id("regenerate")).to_have_count(1)
    await expect(page.get_by_test_id("regenerate")).to_have_count(1)

    chat_id = await page.evaluate("() => Object.entries(localStorage).find(([k]) => k.startsWith('kb.chat.'))[1]")
    async with stack.http() as client:
        page_of = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()
    saved = page_of["data"]["records"]
    assert [r["problem_text"] for r in saved].count(QUESTION) == 2, "the replaced answer stays in the log"
    assert {r["status"] for r in saved} == {"answered"}


async def hit_test_scores(page: Any, mode: str, multi: bool = False) -> list[tuple[str, str]]:
    """Run the hit test in ``mode``; each result's score pill text and tooltip."""
    await page.get_by_test_id("hit-query").fill("探视时间")
    await page.get_by_test_id("hit-similarity").fill("0")
    await page.get_by_test_id("hit-mode").select_option(mode)
    multi_box = page.get_by_test_id("hit-multi")
    await (multi_box.check() if multi else multi_box.uncheck())
    await page.get_by_test_id("hit-run").click()
    results = page.get_by_test_id("hit-result")
    await expect(results.first).to_be_visible()
    pills = results.get_by_test_id("score")
    return [(await p.inner_text(), await p.get_attribute("title") or "") for p in await pills.all()]


async def test_the_hit_test_names_each_score_by_its_search_mode(stack: Stack, operator_page: OperatorPage) -> None:
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    dataset = page.get_by_test_id("dataset").filter(has_text=DEMO_DATASET).first
    await dataset.click()
    await expect(dataset).to_have_attribute("aria-selected", "true")

    for multi in (False, True):
        hybrid = await hit_test_scores(page, "hybrid", multi)
        assert hybrid and all(t.startswith(SCORE_LABELS["hybrid"]) for t, _ in hybrid), hybrid
        assert not any("相似度" in t for t, _ in hybrid), "a rank-fusion score is not a similarity"
        assert all("不是相似度" in hint for _, hint in hybrid), hybrid
    vector = await hit_test_scores(page, "vector")
    assert vector and all(t.startswith("相似度 ") for t, _ in vector), vector
    keyword = await hit_test_scores(page, "keyword")
    assert keyword and all(t.startswith("关键词得分 ") for t, _ in keyword), keyword


async def test_the_chat_trace_names_hybrid_scores_as_rank_fusion(stack: Stack, operator_page: OperatorPage) -> None:
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    record = await finished(await ask(page, QUESTION))
    trace = record.get_by_test_id("trace")
    await trace.locator("> summary").click()
    scores = await trace.get_by_test_id("score").all_text_contents()  # in collapsed citations; hybrid search
    assert scores and all(s.startswith("融合排名分 ") for s in scores), scores
