"""The chat page in a real browser: live rounds, the answer with its sources, the trace and
its stop-reason label, the same trace after a reload, a rewritten follow-up, stop, and errors
shown in place."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.async_api import Locator, Page, expect

from gateway.labels import JUDGED_ASSESSMENT, STOP_REASON_LABELS
from tests.browser.conftest import NewPage, OperatorPage, saved_record
from tests.fakes.openai_server import ChatReply, FakeOpenAI
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID

# Round 1 searches the question and each of its parts; the assessment names the fuel-and-repair
# figure as missing and round 2 finds it (dh-c16, asked in everyday words, on the offline model
# and the sample knowledge base).
COMPOUND = "白石和青禾两边今年给公车加油、修车的钱各安排了多少？哪边花得多？"
FIRST_TURN = "云岭县人民医院普通病区工作日的探视时间是几点到几点？"
FOLLOW_UP = "每次最多可以去几个人？能待多久？"


async def ask(page: Page, question: str) -> Locator:
    """Type and send; the new record, once the page has drawn it from the saved record."""
    count = await page.get_by_test_id("record").count()
    await page.get_by_test_id("question-input").fill(question)
    await page.get_by_test_id("send").click()
    record = page.get_by_test_id("record").nth(count)
    await expect(record.get_by_test_id("record-question")).to_have_text(question)
    return record


async def finished(record: Locator, status: str = "answered") -> Locator:
    await expect(record).to_have_attribute("data-status", status, timeout=60_000)
    return record


async def open_trace(record: Locator) -> Locator:
    trace = record.get_by_test_id("trace")
    await trace.locator("> summary").click()
    await expect(trace).to_have_attribute("open", "")
    return trace


async def trace_texts(trace: Locator) -> dict[str, object]:
    return {
        "stop": await trace.get_by_test_id("stop-reason").inner_text(),
        "rounds": await trace.get_by_test_id("trace-round").count(),
        "queries": await trace.get_by_test_id("trace-query").all_inner_texts(),
        "rewritten": await trace.get_by_test_id("rewritten-question").inner_text(),
        "citations": await trace.get_by_test_id("citation").all_inner_texts(),
    }


async def test_compound_question_shows_each_round_then_the_answer_and_a_trace_that_survives_reload(
    stack: Stack, operator_page: OperatorPage, artifacts: Path
) -> None:
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    await expect(page.get_by_test_id("app-name")).not_to_be_empty()
    record = await finished(await ask(page, COMPOUND))

    steps = await record.get_by_test_id("progress-step").all_inner_texts()
    first_round = [s for s in steps if s.startswith("第 1 轮检索：")]
    assert len(first_round) == 1 and first_round[0].count("；") == 2, (
        f"one line: the question and its two parts: {steps}"
    )
    assert any(s.startswith("第 2 轮检索：") for s in steps), steps
    assert any(s.startswith("继续查找资料：") for s in steps), steps
    assert "正在根据检索资料生成回答…" in steps
    answer = await record.get_by_test_id("answer").inner_text()
    assert "9.50万元" in answer and "7.50万元" in answer
    sources = await record.get_by_test_id("source").all_inner_texts()
    assert any("白石" in s for s in sources) and any("青禾" in s for s in sources), sources
    await page.screenshot(path=artifacts / "answered-chat.png", full_page=True)

    saved = await saved_record(page, record, stack)
    trace = await open_trace(record)
    live = await trace_texts(trace)
    assert live["stop"] == STOP_REASON_LABELS[saved["agent_stop_reason"]]
    assert live["rounds"] == len(saved["agent_trace"]) >= 2
    # The last round's evidence answered both parts by the local judge's reading: no model asked.
    assert await trace.get_by_test_id("assessed-by-judge").all_inner_texts() == [JUDGED_ASSESSMENT]
    await trace.screenshot(path=artifacts / "expanded-trace.png")

    await page.reload()
    restored = page.locator(f'[data-testid=record][data-record-id="{saved["id"]}"]')
    await expect(restored).to_have_attribute("data-status", "answered")
    assert await restored.get_by_test_id("answer").inner_text() == answer
    assert await trace_texts(await open_trace(restored)) == live


async def test_a_follow_up_without_its_subject_is_searched_as_a_rewritten_question(
    stack: Stack, new_page: NewPage
) -> None:
    """Through a share link, as a visitor would."""
    async with stack.http() as client:
        token = (await client.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={})).json()["data"]
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/share/{token['access_token']}")
    await finished(await ask(page, FIRST_TURN))
    record = await finished(await ask(page, FOLLOW_UP))
    trace = await open_trace(record)
    rewritten = await trace.get_by_test_id("rewritten-question").inner_text()
    assert rewritten != FOLLOW_UP and FOLLOW_UP in rewritten
    assert "病区" in rewritten, "the subject of the first turn was carried over"
    assert "人" in await record.get_by_test_id("answer").inner_text()


async def test_stop_mid_answer_keeps_the_partial_answer_as_a_stopped_record(
    remote_stack: Stack, operator_page: OperatorPage
) -> None:
    page = await operator_page(remote_stack)
    await page.goto(f"{remote_stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    record = await ask(page, "云岭县人民医院ICU每天的探视时间是几点到几点？")
    await expect(record.get_by_test_id("answer")).to_contain_text("第3段回答内容")
    await page.get_by_test_id("stop").click()
    await finished(record, "stopped")
    partial = await record.get_by_test_id("answer").inner_text()
    assert "第1段回答内容" in partial and "第60段回答内容" not in partial
    await expect(page.get_by_test_id("send")).to_be_enabled()

    record_id = await record.get_attribute("data-record-id")
    await page.reload()
    restored = page.locator(f'[data-testid=record][data-record-id="{record_id}"]')
    await expect(restored).to_have_attribute("data-status", "stopped")
    assert await restored.get_by_test_id("answer").inner_text() == partial


async def test_refusals_are_explained_in_place(stack: Stack, new_page: NewPage) -> None:
    """A used-up share link and a question that is too long: plain words where the answer
    would be, and the page stays usable."""
    async with stack.http() as client:
        token = (
            await client.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={"access_num": 1})
        ).json()["data"]
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/share/{token['access_token']}")
    await finished(await ask(page, FIRST_TURN))

    over_quota = await ask(page, "年假有几天？")
    await expect(over_quota.get_by_test_id("record-error")).to_contain_text("提问次数已用完")
    too_long = await ask(page, "问" * 9000)
    await expect(too_long.get_by_test_id("record-error")).to_contain_text("问题太长")
    await expect(page.get_by_test_id("send")).to_be_enabled()


async def test_a_bad_share_link_says_so_instead_of_a_blank_page(stack: Stack, new_page: NewPage) -> None:
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/share/not-a-real-token")
    await expect(page.get_by_test_id("page-error")).to_be_visible()
    assert (await page.get_by_test_id("page-error").inner_text()).strip()


async def test_a_model_that_is_down_is_reported_in_the_answer_and_in_the_record(
    remote_stack: Stack, fake_model: FakeOpenAI, operator_page: OperatorPage
) -> None:
    fake_model.default = ChatReply.error(503, "upstream overloaded")
    page = await operator_page(remote_stack)
    await page.goto(f"{remote_stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    record = await ask(page, "云岭县人民医院ICU每天的探视时间是几点到几点？")
    await expect(record.get_by_test_id("record-error")).to_contain_text("模型或检索服务暂时不可用")
    await finished(record, "failed")
    await page.reload()
    await expect(page.get_by_test_id("record").last.get_by_test_id("record-error")).to_contain_text(
        "模型或检索服务暂时不可用"
    )


async def test_a_second_tab_asking_in_a_busy_chat_is_told_to_wait(
    remote_stack: Stack, operator_page: OperatorPage
) -> None:
    first = await operator_page(remote_stack)
    await first.goto(f"{remote_stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    answering = await ask(first, "云岭县人民医院ICU每天的探视时间是几点到几点？")
    await expect(answering.get_by_test_id("answer")).to_contain_text("第1段回答内容")

    second = await first.context.new_page()  # same browser profile, so the same chat
    await second.goto(f"{remote_stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    await expect(second.get_by_test_id("record")).to_have_count(1)  # the running answer, from the records
    refused = await ask(second, "年假有几天？")
    await expect(refused.get_by_test_id("record-error")).to_contain_text("该会话正在回答上一个问题")
    await first.get_by_test_id("stop").click()
    await finished(answering, "stopped")


async def test_answer_markdown_is_rendered_and_html_in_it_is_only_text(
    remote_stack: Stack, fake_model: FakeOpenAI, operator_page: OperatorPage
) -> None:
    hostile = [
        "**探视时间**为16:00至16:30。\n\n",
        "- 每次限1人\n- 需更换隔离衣\n\n",
        '<img src="/x" onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>\n\n',
        "[详情](javascript:alert(1)) 与 [规定](https://example.org/rules)",
    ]
    fake_model.enqueue(
        ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []})), ChatReply.stream(hostile)
    )
    page = await operator_page(remote_stack)
    await page.goto(f"{remote_stack.url}/ui/chat/{DEMO_APPLICATION_ID}")
    record = await finished(await ask(page, "云岭县人民医院ICU每天的探视时间是几点到几点？"))
    answer = record.get_by_test_id("answer")
    await expect(answer.locator("strong")).to_have_text("探视时间")
    await expect(answer.locator("li")).to_have_count(2)
    assert await answer.locator("img, script").count() == 0
    await expect(answer).to_contain_text('<script>document.title="pwned"</script>')
    assert await page.title() != "pwned"
    hrefs = await answer.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert hrefs == ["https://example.org/rules"], hrefs
