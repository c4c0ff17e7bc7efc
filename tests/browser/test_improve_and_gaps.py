"""The operator's loop in a real browser: a visitor votes 👎 with a reason on an answer about
something the knowledge base lacks; the operator filters the log to voted-down answers, opens
the record and writes an improvement into a dataset; the same question asked again retrieves the
new paragraph and answers from it. And the gap report shows a group for questions about a topic
missing from the knowledge base, with its example questions, which open their records."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from tests.browser.conftest import NewPage, OperatorPage
from tests.browser.test_chat_page import ask, finished
from tests.harness import Stack
from tests.sse_client import ask as ask_http
from tools.seed_demo import DEMO_DATASET_ID

QUESTION = "云岭县体育馆游泳池夏季几点闭馆？"
REASON = "知识库里没有游泳池的开放时间"
IMPROVED = "云岭县体育馆游泳池夏季（6月至9月）每日9:00开放，21:00闭馆，周一上午清洁维护。"
MISSING_TOPIC = ["云岭县体育馆游泳池几点开放？", "云岭县体育馆游泳池门票多少钱？", "云岭县体育馆的游泳池能办年卡吗？"]
ANSWERABLE = "云岭县人民医院普通病区工作日的探视时间是几点到几点？"


async def application(stack: Stack, name: str, datasets: list[str]) -> str:
    async with stack.http() as operator:
        created = await operator.post("/api/application", json={"name": name, "dataset_id_list": datasets})
    return str(created.json()["data"]["id"])


async def test_a_voted_down_answer_is_improved_and_the_same_question_then_finds_it(
    stack: Stack, new_page: NewPage, operator_page: OperatorPage, artifacts: Path, unique: str
) -> None:
    async with stack.http() as operator:
        dataset = (await operator.post("/api/dataset", json={"name": f"改进-{unique}"})).json()["data"]
        app_id = await application(stack, f"改进-{unique}", [DEMO_DATASET_ID, dataset["id"]])
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]

    visitor = await new_page(stack.url)
    await visitor.goto(f"{stack.url}/ui/share/{link['access_token']}")
    record = await finished(await ask(visitor, QUESTION))
    await expect(record.get_by_test_id("answer")).not_to_contain_text("21:00")
    votes = record.get_by_test_id("votes")
    await votes.get_by_test_id("vote-down").click()
    await votes.get_by_test_id("vote-reason").fill(REASON)
    await votes.get_by_test_id("vote-reason-send").click()
    await expect(votes).to_have_attribute("data-vote", "1")

    admin = await operator_page(stack)
    await admin.goto(f"{stack.url}/ui/admin#log")
    await admin.get_by_test_id("log-app").select_option(app_id)
    await admin.get_by_test_id("log-vote").select_option("down")
    await admin.get_by_test_id("log-search").click()
    rows = admin.get_by_test_id("log-row")
    await expect(rows).to_have_count(1)
    await rows.first.get_by_test_id("log-open").click()
    detail = admin.get_by_test_id("log-detail")
    await expect(detail.get_by_test_id("log-vote-reason")).to_contain_text(REASON)
    form = detail.get_by_test_id("improve-form")
    await expect(form.get_by_test_id("improve-question")).to_have_value(QUESTION)
    await expect(form.get_by_test_id("improve-dataset").locator(f'option[value="{dataset["id"]}"]')).to_have_count(1)
    await form.get_by_test_id("improve-dataset").select_option(dataset["id"])
    await form.get_by_test_id("improve-answer").fill(IMPROVED)
    await form.get_by_test_id("improve-save").click()
    await expect(form.get_by_test_id("improve-saved")).to_contain_text(dataset["name"])
    await admin.screenshot(path=artifacts / "improved.png", full_page=True)

    again = await finished(await ask(visitor, QUESTION))
    await expect(again.get_by_test_id("answer")).to_contain_text("21:00")
    await visitor.screenshot(path=artifacts / "asked-again.png", full_page=True)
    async with stack.http() as operator:
        log = (await operator.get(f"/api/application/{app_id}/chat/1/10")).json()["data"]["records"]
    newest, improved = log[0], log[1]
    [paragraph_id] = improved["improved_paragraph_ids"]
    assert paragraph_id in [p["id"] for p in newest["paragraph_list"]]


async def test_the_gap_report_page_groups_questions_about_a_missing_topic(
    stack: Stack, operator_page: OperatorPage, artifacts: Path, unique: str
) -> None:
    app_id = await application(stack, f"缺口-{unique}", [DEMO_DATASET_ID])
    async with stack.http() as operator:
        for question in [*MISSING_TOPIC, ANSWERABLE]:
            chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
            response, _ = await ask_http(operator, chat_id, question)
            assert response.status_code == 200

    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin#gaps")
    await page.get_by_test_id("gap-app").select_option(app_id)
    await page.get_by_test_id("gap-show").click()
    groups = page.get_by_test_id("gap-group")
    top = groups.first
    await expect(top.get_by_test_id("gap-label")).to_contain_text("游泳池")
    await expect(top.get_by_test_id("gap-count")).to_contain_text("3")
    examples = top.get_by_test_id("gap-example")
    await expect(examples).to_have_count(3)
    assert sorted(await examples.all_inner_texts()) == sorted(MISSING_TOPIC)
    await expect(page.get_by_test_id("gap-section")).not_to_contain_text(ANSWERABLE)
    await page.get_by_test_id("gap-section").screenshot(path=artifacts / "gap-report.png")

    await examples.first.click()
    detail = page.get_by_test_id("gap-detail")
    await expect(detail.get_by_test_id("record-question")).to_have_text(await examples.first.inner_text())
    await expect(detail.get_by_test_id("improve-form")).to_be_visible()
