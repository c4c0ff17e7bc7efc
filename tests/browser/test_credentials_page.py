"""The operator page's "访问凭据" in a real browser: a key made over HTTP and used once shows
masked with its use count; revoking it on the page makes its next call 401; rotating the share
link on the page ends the old link and its visitor's token."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from kbcore.rpc.caller_token import bearer
from tests.browser.conftest import OperatorPage
from tests.harness import Stack
from tests.sse_client import ask


async def test_revoke_a_key_and_rotate_the_share_link_on_the_operator_page(
    stack: Stack, operator_page: OperatorPage, unique: str, artifacts: Path
) -> None:
    name = f"凭据 {unique}"
    async with stack.http() as operator:
        app_id = (await operator.post("/api/application", json={"name": name})).json()["data"]["id"]
        key = (await operator.post(f"/api/application/{app_id}/api_key")).json()["data"]
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={"access_num": 3})).json()["data"]
        visitor = (
            await operator.post("/api/application/authentication", json={"access_token": link["access_token"]})
        ).json()["data"]
    async with stack.http(headers=bearer(key["secret_key"])) as caller:
        chat_id = (await caller.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        await ask(caller, chat_id, "年休假有几天？")

    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin")
    await page.get_by_test_id("application").filter(has_text=name).click()
    row = page.get_by_test_id("credential-key")
    await expect(row).to_have_count(1)
    await expect(row.get_by_test_id("key-masked")).to_have_text(key["secret_key"][:16] + "…")
    await expect(row.get_by_test_id("key-use-count")).to_have_text("1")
    await expect(page.get_by_test_id("credentials")).not_to_contain_text(key["secret_key"][16:])
    await expect(page.get_by_test_id("link-access-num")).to_have_value("3")
    await page.screenshot(path=str(artifacts / "credentials.png"), full_page=True)

    await row.get_by_test_id("revoke-key").click()  # the confirm dialog is accepted
    await expect(row).to_have_attribute("data-active", "false")
    await expect(row.get_by_test_id("key-state")).to_have_text("已撤销")
    await expect(row.get_by_test_id("reactivate-key")).to_be_visible()
    async with stack.http(headers=bearer(key["secret_key"])) as caller:
        refused = await caller.get(f"/api/application/{app_id}/chat/open")
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]

    await page.get_by_test_id("rotate-link").click()
    new_url = page.get_by_test_id("credential-link-url")
    await expect(new_url).not_to_contain_text(link["access_token"])
    async with stack.http(headers=bearer(visitor)) as old_visitor:
        gone = await old_visitor.get(f"/api/application/{app_id}/chat/open")
    assert gone.status_code == 401 and "open the share link again" in gone.json()["message"]
    new_token = (await new_url.text_content() or "").rsplit("/", 1)[-1]
    async with stack.http() as anonymous:
        fresh = await anonymous.post("/api/application/authentication", json={"access_token": new_token})
    assert fresh.status_code == 200, fresh.text

    await page.get_by_test_id("link-daily-cap").fill("0")
    await page.get_by_test_id("save-link-caps").click()
    await expect(page.get_by_test_id("credentials-status")).to_contain_text("1–10000000")
    await page.screenshot(path=str(artifacts / "credentials-after.png"), full_page=True)
