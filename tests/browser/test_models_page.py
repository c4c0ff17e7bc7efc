"""The operator page's "模型" section in a real browser: a model registered on the
page is listed with only its key's hint, its check reports the endpoint's refusal in words, the
application form offers it as the chat model and saving the form makes the application use it."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import OperatorPage
from tests.fakes.openai_server import ChatReply, FakeOpenAI
from tests.harness import Stack


async def test_register_check_and_choose_a_model_on_the_operator_page(
    stack: Stack, operator_page: OperatorPage, unique: str, artifacts: Path
) -> None:
    secret = f"sk-page-{unique}-wxyz"
    app_name = f"选模型 {unique}"
    async with stack.http() as operator:
        app_id = (await operator.post("/api/application", json={"name": app_name})).json()["data"]["id"]
    with FakeOpenAI(default=ChatReply.error(401, "bad key")) as refusing:
        page = await operator_page(stack)
        await page.goto(f"{stack.url}/ui/admin")
        await page.get_by_test_id("model-name").fill(f"页面模型 {unique}")
        await page.get_by_test_id("model-provider").select_option("vllm")
        await page.get_by_test_id("model-base-url").fill(refusing.base_url)
        await page.get_by_test_id("model-id").fill("fake-chat")
        await page.get_by_test_id("model-api-key").fill(secret)
        await page.get_by_test_id("save-model").click()
        row = page.get_by_test_id("model-row").filter(has_text=f"页面模型 {unique}")
        await expect(row).to_contain_text("…wxyz")
        await expect(page.get_by_test_id("models-section")).not_to_contain_text(secret)
        await row.get_by_test_id("check-model").click()
        await expect(row.get_by_test_id("model-check-result")).to_contain_text("the API key was refused")
        await page.screenshot(path=str(artifacts / "models.png"), full_page=True)

        await page.get_by_test_id("application").filter(has_text=app_name).click()
        await page.get_by_test_id("app-chat-model").select_option(label=f"页面模型 {unique} (fake-chat)")
        await page.get_by_test_id("save-application").click()
        # "已保存：<name>", not the "正在保存…" shown while the request is on its way
        await expect(page.get_by_test_id("app-status")).to_contain_text(app_name)
    model_id = await row.get_attribute("data-id")
    async with stack.http() as operator:
        saved = (await operator.get(f"/api/application/{app_id}")).json()["data"]
    assert model_id and saved["model_setting"]["chat_model_id"] == model_id
