"""The share page as its operator sets it up, in Debian's chromium: the operator fills 访客页面 on
the operator page (name, a logo file, colour, an opening message with suggested questions and a
javascript: link, hint, disclaimer, sources and trace hidden) and saves; a visitor opening the
share link sees all of it, the link inert, and a click on a suggested question asks it."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image
from playwright.async_api import expect

from tests.browser.conftest import NewPage, OperatorPage
from tests.harness import Stack

PROLOGUE = "您好，我是**医院问答助手**。[点我](javascript:alert(1)) <b>粗体</b>\n- 云岭县人民医院ICU每天的探视时间是几点到几点？\n- 普通病区每次能去几个人？"


def logo_file(folder: Path) -> Path:
    """A real PNG, written by Pillow: a teal square with a white bar."""
    image = Image.new("RGB", (64, 64), (15, 118, 110))
    for x in range(12, 52):
        for y in range(28, 36):
            image.putpixel((x, y), (255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    path = folder / "logo.png"
    path.write_bytes(out.getvalue())
    return path


async def test_the_operators_look_on_the_share_page_and_a_suggested_question_asked_by_a_click(
    stack: Stack, operator_page: OperatorPage, new_page: NewPage, unique: str, artifacts: Path, tmp_path: Path
) -> None:
    name = f"外观 {unique}"
    async with stack.http() as operator:
        dataset = (await operator.get("/api/dataset")).json()["data"][0]["id"]
        app_id = (await operator.post("/api/application", json={"name": name, "dataset_id_list": [dataset]})).json()[
            "data"
        ]["id"]
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]

    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    await page.get_by_test_id("application").filter(has_text=name).click()
    await page.get_by_test_id("app-title").fill("云岭医院问答")
    await page.get_by_test_id("app-logo-file").set_input_files(logo_file(tmp_path))
    await expect(page.locator("#app-logo-preview")).to_be_visible()
    await page.get_by_test_id("app-accent").fill("#0f766e")
    await page.get_by_test_id("app-prologue").fill(PROLOGUE)
    await page.get_by_test_id("app-placeholder").fill("想问医院的什么？")
    await page.get_by_test_id("app-disclaimer").fill("回答仅供参考，以医院公告为准。")
    await page.get_by_test_id("app-show-source").uncheck()
    await page.get_by_test_id("app-show-trace").uncheck()
    await page.get_by_test_id("save-application").click()
    await expect(page.get_by_test_id("app-status")).to_contain_text("已保存")
    await page.get_by_test_id("page-look").screenshot(path=artifacts / "operator-page-look-form.png")

    visitor = await new_page(stack.url)
    dialogs: list[str] = []
    visitor.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await visitor.goto(f"{stack.url}/ui/share/{link['access_token']}")
    await expect(visitor.get_by_test_id("app-name")).to_have_text("云岭医院问答")
    logo = visitor.get_by_test_id("app-logo")
    await expect(logo).to_be_visible()
    assert (await logo.get_attribute("src") or "").startswith("data:image/png;base64,")
    accent = await visitor.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()")
    send_colour = await visitor.get_by_test_id("send").evaluate("b => getComputedStyle(b).backgroundColor")
    assert accent == "#0f766e" and send_colour == "rgb(15, 118, 110)"
    assert await visitor.get_by_test_id("question-input").get_attribute("placeholder") == "想问医院的什么？"
    await expect(visitor.get_by_test_id("disclaimer")).to_have_text("回答仅供参考，以医院公告为准。")

    prologue = visitor.get_by_test_id("prologue-text")
    await expect(prologue).to_contain_text("医院问答助手")
    assert await prologue.locator("strong").inner_text() == "医院问答助手"
    assert await prologue.locator("b, img, script, [href^='javascript']").count() == 0, "HTML or a javascript: link ran"
    assert "<b>粗体</b>" in await prologue.inner_text(), "the HTML is shown as the text it is"
    suggestions = visitor.get_by_test_id("suggestion")
    await expect(suggestions).to_have_count(2)
    await visitor.screenshot(path=artifacts / "share-page-with-the-look.png")

    await suggestions.first.click()
    record = visitor.get_by_test_id("record").first
    await expect(record.get_by_test_id("record-question")).to_have_text("云岭县人民医院ICU每天的探视时间是几点到几点？")
    await expect(record).to_have_attribute("data-status", "answered", timeout=60_000)
    assert "16:00" in await record.get_by_test_id("answer").inner_text()
    await expect(record.get_by_test_id("trace")).to_be_hidden()  # and its rounds never reached the visitor
    await expect(record.get_by_test_id("answer-sources")).to_be_hidden()
    await visitor.screenshot(path=artifacts / "share-page-answered.png", full_page=True)
    assert dialogs == [], "something in the opening message ran"
