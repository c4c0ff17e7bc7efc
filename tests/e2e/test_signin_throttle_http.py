"""Failed sign-ins are throttled over HTTP (docs/access.md, People and roles): per username from
one client address, ``KB_SIGNIN_FAILURES`` in 15 minutes, then 429 with a sentence and
``Retry-After`` before any password is checked, the right one included, from that address only:
the same username from another address, and a one-time sign-in link from the attacker's own
address, still sign in, so nobody can keep a known account out by failing on purpose. A forged
``X-Forwarded-For`` does not move the count (no proxy is trusted here). The gateway's own
per-address limit (``KB_SIGNINS_PER_IP`` a minute, docs/access.md, Share links are bounded)
holds for ``POST /api/user/login`` too, says ``Retry-After``, and counts sign-in links apart.

Both limits are set here, on a chat server and a gateway of the test's own over a fresh database
(the suite's stack signs everyone in from 127.0.0.1: a hundred failures there would lock every
other test out), so the counts expected are exact. The client addresses are loopback addresses
other than 127.0.0.1 (all of 127/8 is this machine), one per role in the test.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import UserAccount
from kbcore.rpc.caller_token import operator_token
from kbcore.words.messages import MESSAGES
from services.chat.accounts import signin_throttle
from services.chat.accounts.signin import WRONG
from services.chat.accounts.signin_throttle import TOO_MANY_FOR_ACCOUNT
from tests.fresh_chat import fresh_chat_server
from tests.harness import READS_ENGLISH, Stack, another_gateway

FAILURES = 10  # KB_SIGNIN_FAILURES, its default, set explicitly
SIGNINS_PER_IP = 1000  # above every attempt the first test makes: its 429s are the failure counts'
ATTEMPTS = 100
PASSWORD = "right-Password-42"
WRONG_PASSWORD = "wrong-Password-42"
GATEWAY_LIMIT = 3  # KB_SIGNINS_PER_IP for the gateway limit's own test
GATEWAY_REFUSAL = "too many sign-ins from this address; try again in a minute"
ATTACKER, BYSTANDER, SECOND_ADDRESS, GATEWAY_CLIENT = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"


@dataclass
class Throttled:
    url: str
    sessions: async_sessionmaker[AsyncSession]
    operator: str  # the operator token


@pytest.fixture
def one_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The failure counts' 15-minute window, held for the test: a burst that crossed a window's
    end would be counted in two (tests/services/test_rate_windows.py covers the boundary)."""
    window = signin_throttle.quarter_hour_window()
    monkeypatch.setattr(signin_throttle, "quarter_hour_window", lambda: window)
    yield


@contextlib.asynccontextmanager
async def throttled_stack(stack: Stack, folder: Path, suite_url: str, per_ip: int) -> AsyncIterator[Throttled]:
    async with (
        fresh_chat_server(stack, folder, suite_url, signin_failures=FAILURES) as fresh,
        another_gateway(dataclasses.replace(fresh.served_settings, signins_per_ip=per_ip)) as url,
    ):
        yield Throttled(url, fresh.sessions, operator_token(fresh.settings))


@contextlib.asynccontextmanager
async def client_at(url: str, source: str, token: str = "") -> AsyncIterator[httpx.AsyncClient]:
    """A client whose connections come from ``source`` (any of 127/8 reaches this machine)."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(
        transport=transport, base_url=url, timeout=120, headers={**headers, **READS_ENGLISH}
    ) as client:
        yield client


async def new_user(stack: Throttled, username: str) -> str:
    async with client_at(stack.url, "127.0.0.1", stack.operator) as admin:
        made = await admin.post("/api/user_manage", json={"username": username, "password": PASSWORD})
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["id"])


async def sign_in(
    client: httpx.AsyncClient, username: str, password: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return await client.post("/api/user/login", json={"username": username, "password": password}, headers=headers)


async def sign_in_link(throttled: Throttled, user_id: str) -> str:
    async with client_at(throttled.url, "127.0.0.1", throttled.operator) as admin:
        made = await admin.post(f"/api/user_manage/{user_id}/signin_link")
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["code"])


def retry_after(response: httpx.Response, longest: int) -> int:
    """The seconds ``Retry-After`` says, checked to be a whole number in 1..``longest``."""
    wait = int(response.headers["retry-after"])
    assert 1 <= wait <= longest, wait
    return wait


def is_too_many_for_account(outcome: tuple[int, str]) -> bool:
    before, _, after = MESSAGES[TOO_MANY_FOR_ACCOUNT].en.partition("{minutes}")
    status, message = outcome
    return status == 429 and message.startswith(before) and message.endswith(after)


def said(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["message"]


@pytest.mark.usefixtures("one_window")
async def test_failures_from_one_address_lock_out_only_that_address_never_the_account(
    stack: Stack, tmp_path: Path, database_url: str, unique: str
) -> None:
    async with throttled_stack(stack, tmp_path, database_url, SIGNINS_PER_IP) as throttled:
        alice, bob = f"alice-{unique}", f"bob-{unique}"
        alice_id = await new_user(throttled, alice)
        await new_user(throttled, bob)
        async with client_at(throttled.url, ATTACKER) as attacker:
            # Each attempt claims another address: no proxy is trusted, so the peer's is counted.
            attempts = [
                await sign_in(attacker, alice, WRONG_PASSWORD, {"X-Forwarded-For": f"198.51.100.{n % 250 + 1}"})
                for n in range(ATTEMPTS)
            ]
            right_password = await sign_in(attacker, alice, PASSWORD)
            other_name_same_address = await sign_in(attacker, bob, PASSWORD)
            link_there = await attacker.post(
                "/api/user/signin_link", json={"code": await sign_in_link(throttled, alice_id)}
            )
        async with client_at(throttled.url, SECOND_ADDRESS) as elsewhere:
            same_name_other_address = await sign_in(elsewhere, alice, PASSWORD)
        failed = await failed_sign_ins(throttled, alice_id)
    tried = [said(response) for response in attempts]
    assert tried[:FAILURES] == [(401, str(WRONG))] * FAILURES
    assert all(is_too_many_for_account(outcome) for outcome in tried[FAILURES:]), tried[FAILURES]
    assert [retry_after(response, 15 * 60) for response in attempts[FAILURES:]], "each 429 says when"
    assert is_too_many_for_account(said(right_password)), "throttled: the right password is not even checked"
    assert retry_after(right_password, 15 * 60)
    for response, why in (
        (same_name_other_address, "the account is not locked: the right password from elsewhere signs in"),
        (other_name_same_address, "another username from the attacker's address has its own count"),
        (link_there, "a one-time sign-in link always works, even from the attacker's address"),
    ):
        assert response.status_code == 200 and response.json()["data"].startswith("kbs_"), (why, response.text)
    assert len(failed) == FAILURES, "refusals by the throttle are not in the audit trail"
    assert {e["client_address"] for e in failed} == {ATTACKER} and {e["object_name"] for e in failed} == {alice}


async def failed_sign_ins(throttled: Throttled, user_id: str) -> list[dict[str, Any]]:
    """The audit trail's failed sign-ins of ``user_id``."""
    async with client_at(throttled.url, "127.0.0.1", throttled.operator) as admin:
        page = await admin.get("/api/audit", params={"action": "user.sign_in_failed", "page_size": 500})
    assert page.status_code == 200, page.text
    return [e for e in page.json()["data"]["records"] if e["object_id"] == user_id]


async def test_the_stored_hash_is_argon2id_and_argon2_itself_verifies_the_password(
    stack: Stack, tmp_path: Path, database_url: str, unique: str
) -> None:
    async with throttled_stack(stack, tmp_path, database_url, SIGNINS_PER_IP) as throttled:
        username = f"hashed-{unique}"
        await new_user(throttled, username)
        async with client_at(throttled.url, ATTACKER) as person:
            assert (await sign_in(person, username, PASSWORD)).status_code == 200
        async with throttled.sessions() as session:
            stored = await session.scalar(select(UserAccount.password_hash).where(UserAccount.username == username))
    assert stored is not None and stored.startswith("$argon2id$") and PASSWORD not in stored
    assert PasswordHasher().verify(stored, PASSWORD) is True
    with pytest.raises(VerifyMismatchError):
        PasswordHasher().verify(stored, WRONG_PASSWORD)


async def test_the_gateways_per_address_limit_holds_for_sign_in_successful_or_not(
    stack: Stack, tmp_path: Path, database_url: str, unique: str
) -> None:
    """``KB_SIGNINS_PER_IP`` counts every sign-in from an address in a minute, right ones too,
    before the chat service is asked; another address has its own count."""
    async with throttled_stack(stack, tmp_path, database_url, GATEWAY_LIMIT) as throttled:
        username = f"carol-{unique}"
        user_id = await new_user(throttled, username)
        async with client_at(throttled.url, GATEWAY_CLIENT) as person:
            seen = [(await sign_in(person, username, PASSWORD)).status_code for _ in range(GATEWAY_LIMIT)]
            past = await sign_in(person, username, PASSWORD)
            # Sign-in links are counted apart: the passwords above do not hold one back.
            link = await person.post("/api/user/signin_link", json={"code": await sign_in_link(throttled, user_id)})
        async with client_at(throttled.url, BYSTANDER) as other:
            elsewhere = (await sign_in(other, username, PASSWORD)).status_code
    assert seen == [200] * GATEWAY_LIMIT and said(past) == (429, GATEWAY_REFUSAL) and elsewhere == 200
    assert retry_after(past, 60), "the moving window says when the oldest sign-in leaves it"
    assert link.status_code == 200 and link.json()["data"].startswith("kbs_"), link.text
