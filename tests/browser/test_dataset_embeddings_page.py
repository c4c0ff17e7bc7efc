"""The operator page's embedding model of a dataset: a dataset is created on a
registered embedding model chosen in the form, its list row and panel name the model and its
dimension, and changing it back to the default runs a change whose end the panel shows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import expect

from tests.browser.conftest import OperatorPage
from tests.fakes.low_cosine_embeddings import LowCosineEmbeddings
from tests.harness import Stack


@pytest.fixture(scope="module")
def fake() -> Iterator[LowCosineEmbeddings]:
    with LowCosineEmbeddings(dim=64) as server:
        yield server


async def test_a_dataset_is_created_on_a_chosen_embedding_model_and_moved_back(
    stack: Stack, operator_page: OperatorPage, fake: LowCosineEmbeddings, unique: str
) -> None:
    model_name = f"页面嵌入-{unique}"
    body = {
        "name": model_name,
        "provider": "vllm",
        "model_name": "fake-embedding",
        "purpose": "embedding",
        "credential": {"api_base": fake.base_url, "api_key": ""},
    }
    async with stack.http() as client:
        made = await client.post("/api/model", json=body)
        assert made.status_code == 200, made.text
        model_id = made.json()["data"]["id"]

    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    choice = page.get_by_test_id("dataset-model")
    await expect(choice.locator(f'option[value="{model_id}"]')).to_have_count(1)
    await choice.select_option(model_id)
    name = f"远程库 {unique}"
    await page.get_by_test_id("dataset-name").fill(name)
    await page.get_by_test_id("create-dataset").click()
    row = page.get_by_test_id("dataset").filter(has_text=name)
    await expect(row).to_contain_text(model_name)
    await row.click()
    panel = page.get_by_test_id("dataset-embedding")
    await expect(panel).to_contain_text(f"{model_name} · 64 维")

    await panel.get_by_test_id("dataset-model-change").select_option("")
    await panel.get_by_test_id("change-dataset-model").click()
    await expect(panel.get_by_test_id("dataset-switch")).to_contain_text("已完成", timeout=30_000)
    await expect(panel).to_contain_text("默认向量模型 · 384 维", timeout=30_000)
