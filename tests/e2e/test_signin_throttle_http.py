"""Failed sign-ins are throttled over HTTP (docs/access.md, People and roles): per username and
per client address, ``KB_SIGNIN_FAILURES`` in 15 minutes, then 429 with a sentence before any
password is checked, the right one included; and the gateway's own per-address limit
(``KB_SIGNINS_PER_IP`` a minute, docs/access.md, Share links are bounded) holds for
``POST /api/user/login`` too.

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
from services.chat.accounts import signin_throttle
from services.chat.accounts.signin import WRONG
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


async def sign_in(client: httpx.AsyncClient, username: str, password: str) -> httpx.Response:
    return await client.post("/api/user/login", json={"username": username, "password": password})


def said(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["message"]


@pytest.mark.usefixtures("one_window")
async def test_past_the_failures_every_sign_in_is_429_the_right_password_too_and_only_for_that_name_and_address(
    stack: Stack, tmp_path: Path, database_url: str, unique: str
) -> None:
    async with throttled_stack(stack, tmp_path, database_url, SIGNINS_PER_IP) as throttled:
        alice, bob = f"alice-{unique}", f"bob-{unique}"
        alice_id = await new_user(throttled, alice)
        await new_user(throttled, bob)
        async with client_at(throttled.url, ATTACKER) as attacker:
            tried = [said(await sign_in(attacker, alice, WRONG_PASSWORD)) for _ in range(ATTEMPTS)]
            right_password = said(await sign_in(attacker, alice, PASSWORD))
            other_name_same_address = said(await sign_in(attacker, bob, PASSWORD))
        async with client_at(throttled.url, SECOND_ADDRESS) as elsewhere:
            same_name_other_address = said(await sign_in(elsewhere, alice, PASSWORD))
        async with client_at(throttled.url, BYSTANDER) as bystander:
            bystander_wrong = said(await sign_in(bystander, bob, WRONG_PASSWORD))
            bystander_right = await sign_in(bystander, bob, PASSWORD)
        failed = await failed_sign_ins(throttled, alice_id)
    too_many = (429, signin_throttle.TOO_MANY)
    assert tried == [(401, WRONG)] * FAILURES + [too_many] * (ATTEMPTS - FAILURES)
    assert right_password == too_many, "throttled: the right password is not even checked"
    assert same_name_other_address == too_many, "the username's own count, from any address"
    assert other_name_same_address == too_many, "the address's own count, for any username"
    assert bystander_wrong == (401, WRONG), "another name from another address is counted on its own"
    assert bystander_right.status_code == 200 and bystander_right.json()["data"].startswith("kbs_")
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
        await new_user(throttled, username)
        async with client_at(throttled.url, GATEWAY_CLIENT) as person:
            seen = [(await sign_in(person, username, PASSWORD)).status_code for _ in range(GATEWAY_LIMIT)]
            past = said(await sign_in(person, username, PASSWORD))
        async with client_at(throttled.url, BYSTANDER) as other:
            elsewhere = (await sign_in(other, username, PASSWORD)).status_code
    assert seen == [200] * GATEWAY_LIMIT and past == (429, GATEWAY_REFUSAL) and elsewhere == 200
