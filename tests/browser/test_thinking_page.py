"""A reasoning model's thinking on the chat page: collapsed above the answer under its label,
opened by a click, and drawn the same from the saved record after a reload."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from playwright.async_api import expect
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.labels import THINKING_WORDS
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.store.base import VectorStore
from tests.browser.conftest import OperatorPage
from tests.browser.test_chat_page import ask, finished
from tests.e2e.conftest import ANSWER_CHUNKS
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import Stack
from tests.sse_client import ask as sse_ask
from tests.thinking_model import THINKING, thinking_stack
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"


@pytest.fixture(name="thinking_stack")
async def _thinking_stack(
    stack: Stack,
    fake_model: FakeOpenAI,
    sessions: async_sessionmaker[AsyncSession],
    store: VectorStore,
    embedder: Embedder,
) -> AsyncIterator[Stack]:
    async with thinking_stack(stack, fake_model, sessions, store, embedder) as running:
        yield running


async def test_thinking_is_collapsed_above_the_answer_opens_on_click_and_survives_a_reload(
    thinking_stack: Stack, operator_page: OperatorPage
) -> None:
    page = await operator_page(thinking_stack)
    await page.goto(f"{thinking_stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    record = await finished(await ask(page, QUESTION))
    await expect(record.get_by_test_id("answer")).to_have_text("".join(ANSWER_CHUNKS))

    for attempt in ("live", "reloaded"):
        thinking = record.get_by_test_id("thinking")
        await expect(thinking.get_by_test_id("thinking-summary")).to_have_text(THINKING_WORDS["summary"])
        text = thinking.get_by_test_id("thinking-text")
        await expect(text).to_be_hidden()  # collapsed: the answer is what one reads first
        assert await thinking.get_attribute("open") is None, attempt
        above = await record.evaluate(
            "n => !!(n.querySelector('[data-testid=thinking]').compareDocumentPosition("
            "n.querySelector('[data-testid=answer]')) & Node.DOCUMENT_POSITION_FOLLOWING)"
        )
        assert above, f"{attempt}: the thinking comes before the answer"
        assert "用户问的是" not in await record.get_by_test_id("answer").inner_text(), attempt

        await thinking.get_by_test_id("thinking-summary").click()
        await expect(thinking).to_have_attribute("open", "")
        await expect(text).to_be_visible()
        await expect(text).to_have_text("".join(THINKING))

        record_id = await record.get_attribute("data-record-id")
        await page.reload()
        record = page.locator(f'[data-testid=record][data-record-id="{record_id}"]')
        await expect(record).to_have_attribute("data-status", "answered")


async def test_the_operators_record_view_shows_the_thinking_collapsed(
    thinking_stack: Stack, operator_page: OperatorPage
) -> None:
    """The conversation log opens a record the way the chat page draws it: the thinking is there,
    collapsed above the answer, for the operator who reviews why the model answered so."""
    async with thinking_stack.http() as operator:
        chat_id = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, _ = await sse_ask(operator, chat_id, QUESTION)
        assert response.status_code == 200

    page = await operator_page(thinking_stack)
    await page.goto(f"{thinking_stack.url}/ui/admin#log")
    await page.get_by_test_id("log-app").select_option(DEMO_APPLICATION_ID)
    row = page.get_by_test_id("log-row").filter(has_text=QUESTION).first
    await row.get_by_test_id("log-open").click()
    detail = page.get_by_test_id("log-detail")
    thinking = detail.get_by_test_id("thinking")
    await expect(thinking.get_by_test_id("thinking-summary")).to_have_text(THINKING_WORDS["summary"])
    assert await thinking.get_attribute("open") is None, "collapsed: the answer is what one reads first"
    await thinking.get_by_test_id("thinking-summary").click()
    await expect(thinking.get_by_test_id("thinking-text")).to_have_text("".join(THINKING))
    await expect(detail.get_by_test_id("answer")).to_have_text("".join(ANSWER_CHUNKS))
