"""Signing in to the operator page in a real browser: by username and password, by a one-time
link (once only), signing out (the old session token is refused afterwards), what a viewer is
not shown, and an administrator creating an account in the 用户 section (docs/access.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, ViewportSize, expect

from gateway.labels import ACCOUNT_WORDS, ROLE_LABELS, USER_WORDS
from kbcore.rpc.caller_token import operator_token
from tests.browser.conftest import TOKEN_KEY, NewPage, OperatorPage, sign_in_tab
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

PASSWORD = "correct horse battery"
PHONE: ViewportSize = {"width": 390, "height": 844}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}


def as_bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def operator_client(stack: Stack) -> httpx.AsyncClient:
    return stack.http(headers=as_bearer(operator_token(stack.settings)))


async def create_user(stack: Stack, username: str, role: str, **grants: list[str]) -> dict[str, Any]:
    async with operator_client(stack) as operator:
        reply = await operator.post(
            "/api/user_manage", json={"username": username, "password": PASSWORD, "role": role, **grants}
        )
    assert reply.status_code == 200, reply.text
    user: dict[str, Any] = reply.json()["data"]
    return user


async def session_token(stack: Stack, username: str) -> str:
    async with stack.http() as client:
        reply = await client.post("/api/user/login", json={"username": username, "password": PASSWORD})
    assert reply.status_code == 200, reply.text
    token: str = reply.json()["data"]
    return token


async def who(stack: Stack, token: str) -> httpx.Response:
    async with stack.http(headers=as_bearer(token)) as client:
        return await client.get("/api/user")


async def stored_token(page: Page) -> str | None:
    token: str | None = await page.evaluate(f"() => sessionStorage.getItem('{TOKEN_KEY}')")
    return token


async def test_sign_in_with_a_password_then_see_the_datasets_and_make_a_personal_token(
    stack: Stack, new_page: NewPage, unique: str, artifacts: Path
) -> None:
    username = f"管理员{unique}"
    await create_user(stack, username, "admin")
    page = await new_page(stack.url)
    await page.goto(f"{stack.url}/ui/admin")
    panel = page.get_by_test_id("signin-panel")
    await expect(panel).to_be_visible()
    await expect(page.get_by_test_id("dataset-list")).to_be_hidden()
    await page.screenshot(path=artifacts / "signin.png")

    await page.get_by_test_id("signin-username").fill(username)
    await page.get_by_test_id("signin-password").fill("not the password")
    await page.get_by_test_id("signin-submit").click()
    await expect(page.get_by_test_id("signin-error")).to_contain_text(ACCOUNT_WORDS["bad_credentials"])
    await page.set_viewport_size(PHONE)
    await page.screenshot(path=artifacts / "signin-refused-390.png", full_page=True)
    await page.set_viewport_size(DESKTOP)

    await page.get_by_test_id("signin-password").fill(PASSWORD)
    await page.get_by_test_id("signin-submit").click()
    await expect(panel).to_be_hidden()
    demo = page.locator(f"[data-testid=dataset][data-id='{DEMO_DATASET_ID}']")
    await expect(demo).to_be_visible()
    await expect(demo.get_by_test_id("delete-dataset")).to_be_visible()
    await expect(page.get_by_test_id("account-name")).to_have_text(username)
    await expect(page.get_by_test_id("account-role")).to_have_text(ROLE_LABELS["admin"])
    await expect(page.get_by_test_id("users-section")).to_be_visible()
    token = await stored_token(page)
    assert token and (await who(stack, token)).json()["data"]["username"] == username

    await page.get_by_test_id("token-name").fill("夜间同步")
    await page.get_by_test_id("create-token").click()
    personal = await page.get_by_test_id("new-token").input_value()
    await expect(page.get_by_test_id("token-row").filter(has_text="夜间同步")).to_have_count(1)
    mine = await who(stack, personal)
    assert mine.status_code == 200 and mine.json()["data"]["username"] == username
    await page.screenshot(path=artifacts / "signed-in.png", full_page=True)
    await page.set_viewport_size(PHONE)
    await page.evaluate("() => window.scrollTo(0, 0)")
    await page.screenshot(path=artifacts / "signed-in-390.png")
    await page.get_by_test_id("tokens-section").screenshot(path=artifacts / "tokens-390.png")


async def test_a_one_time_link_signs_in_once_and_a_second_use_is_refused(
    stack: Stack, new_page: NewPage, unique: str, artifacts: Path
) -> None:
    username = f"链接{unique}"
    user = await create_user(stack, username, "editor", datasets=[DEMO_DATASET_ID])
    async with operator_client(stack) as operator:
        link = (await operator.post(f"/api/user_manage/{user['id']}/signin_link")).json()["data"]
    url = f"{stack.url}/ui/admin#signin={link['code']}"

    page = await new_page(stack.url)
    await page.goto(url)
    await expect(page.get_by_test_id("account-name")).to_have_text(username)
    assert "#signin" not in page.url  # the code left the address bar and the history
    token = await stored_token(page)
    assert token
    account = (await who(stack, token)).json()["data"]
    password_panel = page.get_by_test_id("password-panel")
    if account["has_password"] is True:
        await expect(password_panel).to_be_hidden()
    else:  # "设置密码", skippable; the current password asked for unless the account has none
        await expect(password_panel).to_be_visible()
        await expect(password_panel).to_contain_text(ACCOUNT_WORDS["set_password"])
        await page.screenshot(path=artifacts / "set-password.png")
        if await page.get_by_test_id("current-password").is_visible():
            await page.get_by_test_id("current-password").fill(PASSWORD)
        await page.get_by_test_id("new-password").fill("a new password 2")
        await page.get_by_test_id("repeat-password").fill("a new password 2")
        await page.get_by_test_id("save-password").click()
        await expect(page.get_by_test_id("password-saved")).to_have_text(ACCOUNT_WORDS["password_saved"])
        async with stack.http() as client:
            again = await client.post("/api/user/login", json={"username": username, "password": "a new password 2"})
        assert again.status_code == 200, again.text

    second = await new_page(stack.url)
    await second.goto(url)
    await expect(second.get_by_test_id("signin-error")).to_contain_text(ACCOUNT_WORDS["link_failed"])
    await expect(second.get_by_test_id("signin-panel")).to_be_visible()
    assert await stored_token(second) is None
    await second.screenshot(path=artifacts / "link-used.png")


async def test_sign_out_returns_to_the_form_and_the_old_token_is_refused(
    stack: Stack, new_page: NewPage, unique: str, artifacts: Path
) -> None:
    username = f"退出{unique}"
    await create_user(stack, username, "viewer")
    token = await session_token(stack, username)
    page = await new_page(stack.url)
    await sign_in_tab(page, token)
    await page.goto(f"{stack.url}/ui/admin")
    await expect(page.get_by_test_id("account-name")).to_have_text(username)

    await page.get_by_test_id("sign-out").click()
    await expect(page.get_by_test_id("signin-panel")).to_be_visible()
    await expect(page.get_by_test_id("signin-message")).to_have_text(ACCOUNT_WORDS["signed_out"])
    await expect(page.get_by_test_id("account")).to_be_hidden()
    assert await stored_token(page) is None
    assert (await who(stack, token)).status_code == 401
    await page.screenshot(path=artifacts / "signed-out.png")
    await page.reload()
    await expect(page.get_by_test_id("signin-panel")).to_be_visible()
    await expect(page.get_by_test_id("account")).to_be_hidden()

    # "使用令牌": the old token is refused in words; a fresh one (as automation pastes it) signs in.
    await page.get_by_test_id("use-token").click()
    await page.get_by_test_id("admin-token").fill(token)
    await page.get_by_test_id("save-admin-token").click()
    await expect(page.get_by_test_id("signin-message")).to_have_text(ACCOUNT_WORDS["token_refused"])
    assert await stored_token(page) is None
    await page.get_by_test_id("admin-token").fill(await session_token(stack, username))
    await page.get_by_test_id("save-admin-token").click()
    await expect(page.get_by_test_id("account-name")).to_have_text(username)
    await expect(page.get_by_test_id("signin-panel")).to_be_hidden()


async def test_a_viewer_is_shown_no_create_edit_or_delete_buttons(
    stack: Stack, new_page: NewPage, unique: str, artifacts: Path
) -> None:
    username = f"查看{unique}"
    await create_user(stack, username, "viewer", datasets=[DEMO_DATASET_ID], applications=[DEMO_APPLICATION_ID])
    page = await new_page(stack.url)
    await sign_in_tab(page, await session_token(stack, username))
    await page.goto(f"{stack.url}/ui/admin")
    await expect(page.get_by_test_id("account-role")).to_have_text(ROLE_LABELS["viewer"])
    datasets = page.get_by_test_id("dataset")
    await expect(datasets).to_have_count(1)  # only the one granted
    await expect(datasets).to_have_attribute("data-id", DEMO_DATASET_ID)

    # Each control is on the page but not shown: hidden by the role, not missing by accident.
    for testid in ("delete-dataset", "create-dataset", "upload", "web-import", "add-paragraph", "new-application"):
        control = page.get_by_test_id(testid)
        await expect(control).to_have_count(1)
        await expect(control).to_be_hidden()
    document = page.get_by_test_id("document").first
    await expect(document).to_be_visible()
    await expect(document.get_by_test_id("delete-document")).to_be_hidden()
    await document.get_by_test_id("open-paragraphs").click()
    paragraph = page.get_by_test_id("doc-paragraph").first
    await expect(paragraph).to_be_visible()
    for testid in ("edit-paragraph", "toggle-paragraph", "delete-paragraph"):
        await expect(paragraph.get_by_test_id(testid)).to_be_hidden()

    await page.get_by_test_id("application").first.click()
    await expect(page.get_by_test_id("save-application")).to_be_hidden()
    await expect(page.locator("#app-name")).to_be_disabled()  # read, not edited
    await expect(page.get_by_test_id("create-share-link")).to_be_hidden()
    await expect(page.get_by_test_id("credentials")).to_be_empty()
    await expect(page.get_by_test_id("save-model")).to_be_hidden()
    await expect(page.get_by_test_id("users-section")).to_be_hidden()
    await expect(page.get_by_test_id("tokens-section")).to_be_visible()
    await page.screenshot(path=artifacts / "viewer.png", full_page=True)


async def test_an_administrator_creates_changes_and_deletes_a_user_in_the_users_section(
    stack: Stack, operator_page: OperatorPage, unique: str, artifacts: Path
) -> None:
    username = f"新用户{unique}"
    page = await operator_page(stack)
    await page.goto(f"{stack.url}/ui/admin#users")
    await expect(page.get_by_test_id("account-role")).to_have_text(ROLE_LABELS["operator"])
    form = page.get_by_test_id("user-create-form")
    await form.get_by_test_id("new-user-name").fill(username)
    await form.get_by_test_id("new-user-password").fill(PASSWORD)
    await form.get_by_test_id("new-user-repeat").fill(PASSWORD)
    await form.get_by_test_id("new-user-role").select_option("editor")
    await form.locator(f"[data-testid=new-user-dataset][value='{DEMO_DATASET_ID}']").check()
    await form.get_by_test_id("create-user").click()
    await expect(page.get_by_test_id("user-created")).to_contain_text(username)
    row = page.locator(f"[data-testid=user-row][data-username='{username}']")
    await expect(row.get_by_test_id("user-role")).to_have_text(ROLE_LABELS["editor"])
    async with operator_client(stack) as operator:
        users = (await operator.get("/api/user_manage")).json()["data"]
    made = next(u for u in users if u["username"] == username)
    assert made["role"] == "editor" and made["datasets"] == [DEMO_DATASET_ID] and made["is_active"]

    await row.get_by_test_id("make-signin-link").click()
    link = await row.get_by_test_id("signin-link-url").input_value()
    assert link.startswith(f"{stack.url}/ui/admin#signin=") and len(link) > len(f"{stack.url}/ui/admin#signin=") + 16
    await page.get_by_test_id("users-section").screenshot(path=artifacts / "users.png")
    await page.set_viewport_size(PHONE)
    await page.get_by_test_id("users-section").screenshot(path=artifacts / "users-390.png")
    await page.set_viewport_size(DESKTOP)

    await row.get_by_test_id("edit-user").click()
    await row.get_by_test_id("edit-user-role").select_option("viewer")
    await row.get_by_test_id("edit-user-active").uncheck()
    await row.get_by_test_id("save-user").click()
    await expect(row.get_by_test_id("user-role")).to_have_text(ROLE_LABELS["viewer"])
    await expect(row.get_by_test_id("user-inactive")).to_have_text(USER_WORDS["inactive"])
    async with stack.http() as client:
        refused = await client.post("/api/user/login", json={"username": username, "password": PASSWORD})
    assert refused.status_code in (401, 403)  # a switched-off account cannot sign in

    await row.get_by_test_id("delete-user").click()  # the confirm dialog is accepted
    await expect(row).to_have_count(0)
    async with operator_client(stack) as operator:
        users = (await operator.get("/api/user_manage")).json()["data"]
    assert username not in {u["username"] for u in users}
