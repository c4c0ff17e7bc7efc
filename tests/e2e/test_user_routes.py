"""People's accounts over real HTTP (docs/access.md, People and roles): signing in and out, one's
own account, password and personal tokens, user management, and bad input refused with a
sentence before it goes anywhere. No response body ever holds a password the test sent."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from kbcore.rpc.caller_token import operator_token
from services.chat.accounts.user_tokens import (
    PERSONAL_PASSWORD_RESET,
    PERSONAL_ROLE_CHANGED,
    SESSION_PASSWORD_RESET,
    SESSION_ROLE_CHANGED,
)
from tests.harness import READS_ENGLISH, Stack
from tests.shared_tls import TLS
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

PASSWORD = "first-Password-7"
NEW_PASSWORD = "second-Password-8"
RESET_PASSWORD = "reset-by-admin-9"
SENT_PASSWORDS = (PASSWORD, NEW_PASSWORD, RESET_PASSWORD)


async def _no_password_in(response: httpx.Response) -> None:
    """Every response the test's clients read: none may repeat a password sent."""
    body = (await response.aread()).decode("utf-8", "replace")
    for password in SENT_PASSWORDS:
        if password in body:
            raise AssertionError(f"{response.request.method} {response.request.url.path} answered with a password")


def client(stack: Stack, token: str | None = None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(
        verify=TLS,
        base_url=stack.url,
        timeout=120,
        headers={**headers, **READS_ENGLISH},
        event_hooks={"response": [_no_password_in]},
    )


def operator(stack: Stack) -> httpx.AsyncClient:
    return client(stack, operator_token(stack.settings))


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url.path}: {response.text}"
    return response.json()["data"]


async def sign_in(stack: Stack, username: str, password: str) -> str:
    async with client(stack) as anonymous:
        token = data(await anonymous.post("/api/user/login", json={"username": username, "password": password}))
    assert isinstance(token, str) and token.startswith("kbs_")
    return token


async def new_user(stack: Stack, username: str, role: str = "editor", **grants: list[str]) -> dict[str, Any]:
    async with operator(stack) as admin:
        body = {"username": username, "password": PASSWORD, "role": role, **grants}
        made: dict[str, Any] = data(await admin.post("/api/user_manage", json=body))
    return made


@pytest.fixture
def username(unique: str) -> Iterator[str]:
    yield f"person-{unique}"


async def test_a_person_signs_in_reads_their_account_changes_their_password_and_signs_out(
    stack: Stack, username: str
) -> None:
    made = await new_user(stack, f"  {username}  ", datasets=[DEMO_DATASET_ID], applications=[DEMO_APPLICATION_ID])
    assert made["username"] == username, "stored stripped"
    assert (made["role"], made["datasets"], made["applications"]) == (
        "editor",
        [DEMO_DATASET_ID],
        [DEMO_APPLICATION_ID],
    )
    session, other_session = await sign_in(stack, username, PASSWORD), await sign_in(stack, username, PASSWORD)
    async with client(stack, session) as person:
        me = data(await person.get("/api/user"))
        assert (me["id"], me["username"], me["role"], me["is_active"]) == (made["id"], username, "editor", True)
        assert "dataset_create" in me["permissions"] and "admin" not in me["permissions"]
        assert me["has_password"] is True and me["datasets"] == [DEMO_DATASET_ID]
        changed = await person.put(
            "/api/user/re_password",
            json={"current_password": PASSWORD, "password": NEW_PASSWORD, "re_password": NEW_PASSWORD},
        )
        assert data(changed) is True
        assert (await person.get("/api/user")).status_code == 200, "the session that changed it goes on"
    async with client(stack, other_session) as elsewhere:
        assert (await elsewhere.get("/api/user")).status_code == 401, "the person's other sessions end"
    async with client(stack) as anonymous:
        old = await anonymous.post("/api/user/login", json={"username": username, "password": PASSWORD})
        assert old.status_code == 401
    renewed = await sign_in(stack, username, NEW_PASSWORD)
    async with client(stack, renewed) as person:
        assert data(await person.post("/api/user/logout")) is True
        assert (await person.get("/api/user")).status_code == 401, "a signed-out session names nobody"


async def refusal_of(stack: Stack, token: str, language: str) -> tuple[int, str]:
    async with client(stack, token) as caller:
        response = await caller.get("/api/user", headers={"Accept-Language": language})
    return response.status_code, response.json()["message"]


async def test_a_reset_or_a_role_change_ends_every_session_and_personal_token_saying_why(
    stack: Stack, username: str
) -> None:
    """Refused on their next call, in the reader's language, with what happened and what to do."""
    made = await new_user(stack, username, role="viewer")
    session = await sign_in(stack, username, PASSWORD)
    async with client(stack, session) as person:
        personal = data(await person.post("/api/user/token", json={"name": "nightly"}))["token"]
    async with operator(stack) as admin:
        reset = {"password": RESET_PASSWORD, "re_password": RESET_PASSWORD}
        assert data(await admin.put(f"/api/user_manage/{made['id']}/re_password", json=reset)) is True
    assert await refusal_of(stack, session, "en") == (401, str(SESSION_PASSWORD_RESET))
    assert await refusal_of(stack, personal, "en") == (401, str(PERSONAL_PASSWORD_RESET))
    assert await refusal_of(stack, session, "zh-CN") == (401, SESSION_PASSWORD_RESET.render("zh"))
    assert await refusal_of(stack, personal, "zh-CN") == (401, PERSONAL_PASSWORD_RESET.render("zh"))

    session = await sign_in(stack, username, RESET_PASSWORD)
    async with client(stack, session) as person:
        personal = data(await person.post("/api/user/token", json={"name": "nightly"}))["token"]
    async with operator(stack) as admin:
        assert data(await admin.put(f"/api/user_manage/{made['id']}", json={"role": "editor"}))["role"] == "editor"
    assert await refusal_of(stack, session, "en") == (401, str(SESSION_ROLE_CHANGED))
    assert await refusal_of(stack, personal, "zh-CN") == (401, PERSONAL_ROLE_CHANGED.render("zh"))
    async with client(stack, await sign_in(stack, username, RESET_PASSWORD)) as person:
        assert data(await person.get("/api/user"))["role"] == "editor", "signed in again, with the new role"


async def test_the_operator_token_is_the_operator_account(stack: Stack) -> None:
    async with operator(stack) as admin:
        me = data(await admin.get("/api/user"))
    assert (me["id"], me["username"], me["role"]) == ("", "operator", "operator")
    assert "admin" in me["permissions"]


async def test_personal_tokens_are_shown_once_listed_by_prefix_and_revocable(stack: Stack, username: str) -> None:
    await new_user(stack, username, role="viewer")
    async with client(stack, await sign_in(stack, username, PASSWORD)) as person:
        expires = (datetime.now(UTC) + timedelta(days=30)).isoformat()
        made = data(await person.post("/api/user/token", json={"name": "cli", "expires_at": expires}))
        token = made["token"]
        assert token.startswith("kbp_") and made["name"] == "cli" and made["is_active"] is True
        listed = await person.get("/api/user/token")
        assert token not in listed.text, "a token is shown once, never listed"
        assert [t["id"] for t in data(listed)] == [made["id"]] and token.startswith(data(listed)[0]["prefix"])
        async with client(stack, token) as script:
            assert data(await script.get("/api/user"))["username"] == username
            assert data(await person.delete(f"/api/user/token/{made['id']}")) is True
            assert (await script.get("/api/user")).status_code == 401, "a revoked token names nobody"
        unnamed = await person.post("/api/user/token", json={"name": "   "})
        assert unnamed.status_code == 400 and "name" in unnamed.json()["message"]


async def test_an_administrator_manages_people(stack: Stack, username: str) -> None:
    made = await new_user(stack, username, datasets=[DEMO_DATASET_ID], applications=[DEMO_APPLICATION_ID])
    session = await sign_in(stack, username, PASSWORD)
    async with operator(stack) as admin:
        assert username in [u["username"] for u in data(await admin.get("/api/user_manage"))]
        page = data(await admin.get("/api/user_manage/1/1"))
        assert len(page["records"]) == 1 and page["total"] >= 1 and (page["current"], page["size"]) == (1, 1)
        changed = data(await admin.put(f"/api/user_manage/{made['id']}", json={"role": "viewer", "datasets": []}))
        assert (changed["role"], changed["datasets"]) == ("viewer", [])
        assert changed["applications"] == [DEMO_APPLICATION_ID], "grants of the kind not sent stay"
        nothing = await admin.put(f"/api/user_manage/{made['id']}", json={})
        assert nothing.status_code == 400 and "at least one" in nothing.json()["message"]
        reset = f"/api/user_manage/{made['id']}/re_password"
        differ = await admin.put(reset, json={"password": RESET_PASSWORD, "re_password": RESET_PASSWORD + "x"})
        assert differ.status_code == 400 and "differ" in differ.json()["message"]
        assert data(await admin.put(reset, json={"password": RESET_PASSWORD, "re_password": RESET_PASSWORD})) is True
        link = data(await admin.post(f"/api/user_manage/{made['id']}/signin_link"))
    async with client(stack, session) as person:
        assert (await person.get("/api/user")).status_code == 401, "a reset ends the person's sessions"
    async with client(stack) as anonymous:
        redeemed = data(await anonymous.post("/api/user/signin_link", json={"code": link["code"]}))
        assert redeemed.startswith("kbs_")
        again = await anonymous.post("/api/user/signin_link", json={"code": link["code"]})
        assert again.status_code in (401, 404, 409), "a sign-in link is used once"
    await _deactivate_then_delete(stack, made["id"], redeemed)


async def _deactivate_then_delete(stack: Stack, user_id: str, session: str) -> None:
    async with operator(stack) as admin, client(stack, session) as person:
        assert data(await person.get("/api/user"))["id"] == user_id
        data(await admin.put(f"/api/user_manage/{user_id}", json={"is_active": False}))
        assert (await person.get("/api/user")).status_code == 401, "a deactivated person is refused at once"
        data(await admin.put(f"/api/user_manage/{user_id}", json={"is_active": True}))
        fresh = await sign_in(stack, (await _username(admin, user_id)), RESET_PASSWORD)
        async with client(stack, fresh) as again:
            assert (await again.get("/api/user")).status_code == 200
            assert data(await admin.delete(f"/api/user_manage/{user_id}")) is True
            assert (await again.get("/api/user")).status_code == 401, "a deleted person's token names nobody"
        assert user_id not in [u["id"] for u in data(await admin.get("/api/user_manage"))]


async def _username(admin: httpx.AsyncClient, user_id: str) -> str:
    return str(next(u["username"] for u in data(await admin.get("/api/user_manage")) if u["id"] == user_id))


async def test_people_who_are_not_administrators_manage_no_one(stack: Stack, username: str) -> None:
    await new_user(stack, username)
    async with client(stack, await sign_in(stack, username, PASSWORD)) as editor:
        refused = await editor.get("/api/user_manage")
        assert refused.status_code == 403 and refused.json()["message"] == "only an administrator may do this"
        created = await editor.post("/api/user_manage", json={"username": "x" + username, "password": PASSWORD})
        assert created.status_code == 403


@pytest.mark.parametrize(
    ("name", "sentence"),
    [
        ("bad\x00name", "control characters"),
        ("line\nbreak", "control characters"),
        ("x" * 10_000, "at most 64 characters"),
        ("     ", "only spaces"),
        ("", "only spaces"),
    ],
)
async def test_a_bad_username_is_refused_with_a_sentence(stack: Stack, name: str, sentence: str) -> None:
    async with client(stack) as anonymous, operator(stack) as admin:
        signing_in = await anonymous.post("/api/user/login", json={"username": name, "password": PASSWORD})
        creating = await admin.post("/api/user_manage", json={"username": name, "password": PASSWORD})
    for refused in (signing_in, creating):
        message = refused.json()["message"]
        assert refused.status_code == 400 and "username" in message and sentence in message
        assert len(message) < 300, "the sentence does not repeat what was sent"


async def test_bad_passwords_are_refused_before_they_go_anywhere(stack: Stack, unique: str) -> None:
    huge = "p" * 1_000_000
    async with client(stack) as anonymous, operator(stack) as admin:
        enormous = await anonymous.post("/api/user/login", json={"username": f"nobody-{unique}", "password": huge})
        assert enormous.status_code in (400, 413) and huge[:300] not in enormous.text
        long = await admin.post("/api/user_manage", json={"username": f"long-{unique}", "password": "p" * 257})
        assert long.status_code == 400 and "at most 256 characters" in long.json()["message"]
        short = await admin.post("/api/user_manage", json={"username": f"short-{unique}", "password": "seven77"})
        assert short.status_code == 400 and "at least 8 characters" in short.json()["message"]
        assert "seven77" not in short.text
        listed = [u["username"] for u in data(await admin.get("/api/user_manage"))]
    assert f"long-{unique}" not in listed and f"short-{unique}" not in listed


async def test_a_password_change_is_refused_when_the_two_differ_or_the_current_one_is_wrong(
    stack: Stack, username: str
) -> None:
    await new_user(stack, username)
    async with client(stack, await sign_in(stack, username, PASSWORD)) as person:
        differ = await person.put(
            "/api/user/re_password",
            json={"current_password": PASSWORD, "password": NEW_PASSWORD, "re_password": RESET_PASSWORD},
        )
        assert differ.status_code == 400 and "differ" in differ.json()["message"]
        wrong = await person.put(
            "/api/user/re_password",
            json={"current_password": RESET_PASSWORD, "password": NEW_PASSWORD, "re_password": NEW_PASSWORD},
        )
        assert wrong.status_code in (400, 401, 403), wrong.text
        assert (await person.get("/api/user")).status_code == 200, "nothing changed"
    assert await sign_in(stack, username, PASSWORD)
