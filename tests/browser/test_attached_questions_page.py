"""Attaching a visitor's question to a paragraph from the conversation log, in a real browser:
the operator opens a record whose answer missed, looks the right paragraph up in the documents'
own words and attaches the question; the paragraph panel lists it under that paragraph (where it
can be added, reworded and removed); the same question asked again brings the paragraph first, and the record's
trace says it was matched by the attached question."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import FloatRect, Locator, Page, expect

from tests.browser.conftest import OperatorPage
from tests.document_jobs import wait_for_documents
from tests.harness import Stack
from tests.sse_client import ask as ask_http

PARAGRAPHS = [
    {"title": "护理假", "content": "员工配偶生育的，男方享受护理假十五天，护理假期间工资照发。"},
    {"title": "婚假", "content": "依法登记结婚的员工享受婚假三天，再婚的同样享受。"},
]
ASKED = "老婆刚生了娃，当爹的能歇几天？"


async def shot(page: Page, part: Locator, path: Path) -> None:
    """The page as a person sees it, cut to ``part``: readable where a whole page is not."""
    box = await part.bounding_box()  # relative to the viewport; the clip is on the whole page
    assert box is not None
    left, top = await page.evaluate("[window.scrollX, window.scrollY]")
    clip = FloatRect(x=box["x"] + left, y=box["y"] + top, width=box["width"], height=box["height"])
    await page.screenshot(path=path, full_page=True, clip=clip)


async def open_latest_record(admin: Page, stack: Stack, app_id: str, records: int) -> None:
    """Opens the newest of the application's ``records`` records in the conversation log. The
    table keeps the rows of its last search until the next one answers (the application shown
    first, or this one before the question was asked again), so the rows are waited for first:
    clicking at once can open an older record when the search answers late, as on a busy machine."""
    await admin.goto(f"{stack.url}/ui/admin#log")
    await admin.get_by_test_id("log-app").select_option(app_id)
    await admin.get_by_test_id("log-search").click()
    rows = admin.get_by_test_id("log-row")
    asked = rows.filter(has_text=ASKED)
    await expect(asked).to_have_count(records)
    await asked.first.get_by_test_id("log-open").click()


async def test_a_question_from_the_log_is_attached_and_then_brings_its_paragraph(
    stack: Stack, operator_page: OperatorPage, artifacts: Path, unique: str
) -> None:
    async with stack.http() as operator:
        dataset = (await operator.post("/api/dataset", json={"name": f"假期-{unique}"})).json()["data"]
        body = {"name": "假期制度", "paragraphs": PARAGRAPHS}
        assert (await operator.post(f"/api/dataset/{dataset['id']}/document", json=body)).status_code == 200
        [document] = await wait_for_documents(operator, dataset["id"])
        records = (await operator.get(f"/api/dataset/{dataset['id']}/document/{document['id']}/paragraph/1/10")).json()
        leave = next(p for p in records["data"]["records"] if p["title"] == "护理假")
        created = await operator.post(
            "/api/application", json={"name": f"假期-{unique}", "dataset_id_list": [dataset["id"]]}
        )
        app_id = created.json()["data"]["id"]
        chat_id = (await operator.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        await ask_http(operator, chat_id, ASKED)

    admin = await operator_page(stack)
    await open_latest_record(admin, stack, app_id, records=1)
    box = admin.get_by_test_id("log-detail").get_by_test_id("attach-from-log")
    await expect(box).to_be_visible()
    await box.get_by_test_id("attach-lookup").fill("护理假")
    await box.get_by_test_id("attach-search").click()
    candidate = box.get_by_test_id("attach-results").locator(f'[data-paragraph-id="{leave["id"]}"]')
    await expect(candidate).to_have_count(1)
    await candidate.get_by_test_id("attach-question").click()
    await expect(candidate.get_by_test_id("attach-question")).to_have_text("已关联")
    await expect(box.get_by_test_id("attach-status")).to_contain_text("已关联")
    await shot(admin, box, artifacts / "attached-from-log.png")

    # The paragraph panel lists it under the paragraph.
    await admin.goto(f"{stack.url}/ui/admin#datasets")
    await admin.get_by_test_id("dataset").filter(has_text=dataset["name"]).click()
    await admin.get_by_test_id("document").first.get_by_test_id("open-paragraphs").click()
    paragraph = admin.get_by_test_id("doc-paragraph").filter(has_text="护理假期间")
    fold = paragraph.get_by_test_id("paragraph-questions")
    await expect(fold.get_by_test_id("question-count")).to_have_text("关联问题 1", timeout=15_000)
    await fold.get_by_test_id("question-count").click()
    await expect(fold.get_by_test_id("attached-question")).to_contain_text(ASKED)
    await fold.get_by_test_id("add-question").click()  # nothing written yet: refused in words
    await expect(fold.get_by_test_id("question-status")).to_have_text("请先写下问题。")
    await fold.get_by_test_id("question-input").fill("陪产假几天")
    await fold.get_by_test_id("add-question").click()
    await expect(fold.get_by_test_id("question-count")).to_have_text("关联问题 2")
    reworded = fold.get_by_test_id("attached-question").filter(has_text="陪产假几天")
    await reworded.get_by_test_id("edit-question").click()
    await fold.get_by_test_id("question-edit-input").fill("陪产假有几天")
    await fold.get_by_test_id("save-question").click()
    await expect(fold.get_by_test_id("attached-question").filter(has_text="陪产假有几天")).to_have_count(1)
    await shot(admin, paragraph, artifacts / "paragraph-questions.png")

    # Asked again: the paragraph comes first, and the trace says why.
    async with stack.http() as operator:
        await ask_http(operator, chat_id, ASKED)
    await open_latest_record(admin, stack, app_id, records=2)
    marks = admin.get_by_test_id("log-detail").get_by_test_id("matched-question")
    await expect(marks.first).to_contain_text(f"经关联问题命中：{ASKED}")
    await admin.get_by_test_id("log-detail").evaluate(
        "el => el.querySelectorAll('details').forEach(d => d.open = true)"
    )
    await shot(admin, marks.first.locator("xpath=ancestor::div[@class='paragraph'][1]"), artifacts / "matched.png")

    # Removed from the panel: gone from the paragraph.
    await admin.goto(f"{stack.url}/ui/admin#datasets")
    await admin.get_by_test_id("dataset").filter(has_text=dataset["name"]).click()
    await admin.get_by_test_id("document").first.get_by_test_id("open-paragraphs").click()
    fold = admin.get_by_test_id("doc-paragraph").filter(has_text="护理假期间").get_by_test_id("paragraph-questions")
    await fold.get_by_test_id("question-count").click()
    await fold.get_by_test_id("attached-question").filter(has_text=ASKED).get_by_test_id("remove-question").click()
    await expect(fold.get_by_test_id("question-count")).to_have_text("关联问题 1")
    async with stack.http() as operator:
        url = f"/api/dataset/{dataset['id']}/document/{document['id']}/paragraph/{leave['id']}/problem"
        assert [q["content"] for q in (await operator.get(url)).json()["data"]] == ["陪产假有几天"]
