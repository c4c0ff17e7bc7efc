"""The first run, in Debian's chromium: a deployment with no model endpoint and no registered
model says at the top of the operator page that every answer comes from the offline model, and
its button leads to the model form; once a chat model is registered the notice is gone. The
stack here has a database of its own: the suite's shared one has models other tests registered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import expect

from kbcore.db.engine import create_engine as create_async_db_engine
from kbcore.db.engine import session_factory
from kbcore.db.migrate import upgrade
from kbcore.settings import Settings
from tests.browser.conftest import OperatorPage
from tests.harness import Stack, start_stack

pytestmark = [pytest.mark.own_database]


@pytest.fixture
async def first_run_stack(tmp_path: Path, store: Any, embedder: Any, offline_model: Any) -> AsyncIterator[Stack]:
    """A stack on a new, empty SQLite database, answering with the offline model."""
    url = f"sqlite:///{tmp_path / 'first-run.sqlite3'}"
    upgrade(url)
    engine = create_async_db_engine(url)
    settings = Settings(data_dir=tmp_path, database_url=url, context_port=0, retrieval_port=0, chat_port=0)
    running = await start_stack(
        settings, sessions=session_factory(engine), store=store, embedder=embedder, model=offline_model
    )
    yield running
    await running.stop()
    await engine.dispose()


async def test_the_operator_page_says_answers_are_offline_until_a_chat_model_is_registered(
    first_run_stack: Stack, operator_page: OperatorPage, artifacts: Path
) -> None:
    stack = first_run_stack
    async with stack.http() as operator:
        assert (await operator.get("/api/model/deployment")).json()["data"] == {"chat_offline": True, "chat_models": 0}
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    notice = page.get_by_test_id("first-run")
    await expect(notice).to_be_visible()
    text = await page.get_by_test_id("first-run-text").inner_text()
    assert "离线抽取模型" in text and "DeepSeek" in text and "KB_" not in text, text
    await page.screenshot(path=artifacts / "first-run-notice.png")

    await page.get_by_test_id("first-run-register").click()
    form = page.locator("#model-form")
    await expect(form.get_by_test_id("model-name")).to_be_focused()
    assert await form.get_by_test_id("model-purpose").input_value() == "chat"
    await form.get_by_test_id("model-name").fill("DeepSeek")
    await form.get_by_test_id("model-provider").select_option("deepseek")
    await form.get_by_test_id("model-base-url").fill("https://api.deepseek.com/v1")
    await form.get_by_test_id("model-id").fill("deepseek-chat")
    await form.get_by_test_id("model-api-key").fill("sk-first-run-test")
    await form.get_by_test_id("save-model").click()
    await expect(page.get_by_test_id("model-list")).to_contain_text("DeepSeek")
    await expect(notice).to_be_hidden()
    async with stack.http() as operator:
        assert (await operator.get("/api/model/deployment")).json()["data"] == {"chat_offline": True, "chat_models": 1}
