"""Rerank on the pages: the application form offers registered rerank models (and
only them) in its own select, saving it makes the application rerank, and the chat page's trace
labels the rerank model's scores 重排序得分 and says the round was reranked."""

from __future__ import annotations

from playwright.async_api import expect

from gateway.labels import RERANK_WORDS
from tests.browser.conftest import OperatorPage
from tests.browser.test_chat_page import ask, finished
from tests.fakes.reranker import FakeReranker
from tests.harness import Stack
from tools.seed_demo import DEMO_DATASET_ID

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"


async def test_choose_a_reranker_on_the_form_and_see_its_scores_in_the_trace(
    stack: Stack, operator_page: OperatorPage, unique: str
) -> None:
    app_name = f"重排序 {unique}"
    with FakeReranker() as reranker:
        async with stack.http() as operator:
            for name, purpose in ((f"重排 {unique}", "rerank"), (f"对话 {unique}", "chat")):
                body = {
                    "name": name,
                    "provider": "vllm",
                    "model_name": f"m-{purpose}",
                    "purpose": purpose,
                    "credential": {"api_base": reranker.base_url, "api_key": ""},
                }
                assert (await operator.post("/api/model", json=body)).status_code == 200
            made = await operator.post(
                "/api/application", json={"name": app_name, "dataset_id_list": [DEMO_DATASET_ID]}
            )
            app_id = made.json()["data"]["id"]
        page = await operator_page(stack)
        await page.goto(f"{stack.url}/ui/admin")
        await page.get_by_test_id("application").filter(has_text=app_name).click()
        choice = page.get_by_test_id("app-rerank-model")
        await expect(choice).to_have_value("")
        await expect(choice.locator("option").first).to_have_text(RERANK_WORDS["none"])
        await expect(choice).not_to_contain_text(f"对话 {unique}")  # a chat model is no reranker
        await choice.select_option(label=f"重排 {unique} (m-rerank)")
        await page.get_by_test_id("save-application").click()
        await expect(page.get_by_test_id("app-status")).to_contain_text(app_name)
        async with stack.http() as operator:
            saved = (await operator.get(f"/api/application/{app_id}")).json()["data"]
        assert saved["model_setting"]["rerank_model_id"]

        await page.goto(f"{stack.url}/ui/chat/{app_id}")
        record = await finished(await ask(page, QUESTION))
        assert reranker.requests, "the saved choice made the application rerank"
        trace = record.get_by_test_id("trace")
        await trace.locator("> summary").click()
        await expect(trace.get_by_test_id("reranked").first).to_have_text(RERANK_WORDS["reranked"])
        scores = await trace.get_by_test_id("rerank-score").all_text_contents()
        assert scores and all(s.startswith(RERANK_WORDS["score"] + " ") for s in scores), scores
