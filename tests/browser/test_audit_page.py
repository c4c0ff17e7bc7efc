"""The 审计 section of the operator page in a real browser (docs/access.md, "The audit trail"):
it reads the trail only when it comes into view, lists an action done before, a filter narrows
it, and 导出 CSV downloads the filtered set; a viewer is not shown the section at all."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, Request, expect

from gateway.labels import AUDIT_WORDS
from kbcore.rpc.caller_token import operator_token
from tests.browser.conftest import NewPage, OperatorPage, sign_in_tab
from tests.harness import Stack
from tools.seed_demo import DEMO_DATASET_ID

PASSWORD = "audit-page-Password-7"


def operator_client(stack: Stack) -> httpx.AsyncClient:
    return stack.http(headers={"Authorization": f"Bearer {operator_token(stack.settings)}"})


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


async def opened(page: Page, stack: Stack) -> list[str]:
    """The operator page, signed in and its sections loaded (the gap report's applications are
    the last); → the trail requests it makes, as they are made."""
    asked: list[str] = []

    def note(request: Request) -> None:
        if "/api/audit" in request.url:
            asked.append(request.url)

    page.on("request", note)
    await page.goto(f"{stack.url}/ui/admin")
    await expect(page.get_by_test_id("account-name")).to_be_visible()
    await expect(page.get_by_test_id("gap-app").locator("option").first).to_be_attached()
    return asked


async def test_the_trail_lists_filters_and_exports(
    stack: Stack, operator_page: OperatorPage, unique: str, artifacts: Path
) -> None:
    app_name = f"审计页面应用-{unique}"
    username = f"审计页面用户-{unique}"
    async with operator_client(stack) as operator:
        body = {"name": app_name, "dataset_id_list": [DEMO_DATASET_ID]}
        app = str(data(await operator.post("/api/application", json=body))["id"])
        body = {"username": username, "password": PASSWORD, "role": "viewer"}
        user = data(await operator.post("/api/user_manage", json=body))

    page = await operator_page(stack)
    asked = await opened(page, stack)
    section = page.get_by_test_id("audit-section")
    assert not asked, "the trail is read when its section shows, not at page load"

    await page.locator('.topnav a[href="#audit"]').click()
    rows = section.get_by_test_id("audit-row")
    await expect(rows.filter(has_text=app_name)).to_have_count(1)
    await expect(rows.filter(has_text=username)).to_have_count(1)
    app_row = rows.filter(has_text=app_name)
    await expect(app_row.get_by_test_id("audit-action-name")).to_have_text("application.create")
    await expect(app_row).to_contain_text("新建应用")
    await expect(app_row.get_by_test_id("audit-actor-name")).to_have_text("operator")
    await expect(app_row.get_by_test_id("audit-object-id")).to_have_text(app)
    assert len(asked) == 1, asked
    await section.screenshot(path=artifacts / "audit-list.png")

    await section.get_by_test_id("audit-action").fill("application.")
    await section.get_by_test_id("audit-object").fill(app)
    await section.get_by_test_id("audit-search").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text(app_name)
    await expect(section.get_by_test_id("audit-page")).to_contain_text("共 1 条")
    await section.screenshot(path=artifacts / "audit-filtered.png")
    await page.screenshot(path=artifacts / "audit-page.png", full_page=True)

    async with page.expect_download() as downloading:
        await section.get_by_test_id("audit-export").click()
    download = await downloading.value
    assert download.suggested_filename.startswith("audit-") and download.suggested_filename.endswith(".csv")
    saved = artifacts / download.suggested_filename
    await download.save_as(saved)
    exported = list(csv.DictReader(io.StringIO(saved.read_text(encoding="utf-8-sig"))))
    assert [(r["action"], r["object_id"], r["object_name"]) for r in exported] == [
        ("application.create", app, app_name)
    ], "the export is the filtered set"
    await expect(section.get_by_test_id("audit-export-status")).to_contain_text("1")

    await section.get_by_test_id("audit-object").fill(user["id"])
    await section.get_by_test_id("audit-search").click()
    await expect(section.get_by_test_id("audit-empty")).to_have_text(str(AUDIT_WORDS["empty"]))


async def test_a_viewer_is_not_shown_the_trail(stack: Stack, new_page: NewPage, unique: str) -> None:
    username = f"audit-viewer-{unique}"
    async with operator_client(stack) as operator:
        data(
            await operator.post("/api/user_manage", json={"username": username, "password": PASSWORD, "role": "viewer"})
        )
    async with stack.http(anonymous=True) as anonymous:
        token = data(await anonymous.post("/api/user/login", json={"username": username, "password": PASSWORD}))
    page = await new_page(stack.url)
    await sign_in_tab(page, token)
    await page.goto(f"{stack.url}/ui/admin")
    await expect(page.get_by_test_id("account-name")).to_have_text(username)
    await expect(page.get_by_test_id("log-section")).to_be_visible()
    await expect(page.get_by_test_id("audit-section")).to_be_hidden()
    await expect(page.locator('.topnav a[href="#audit"]')).to_be_hidden()
