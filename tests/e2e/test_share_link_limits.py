"""A share link's quota cannot be multiplied by signing in again.

Sign-in was anonymous and unlimited and every fresh visitor token got a fresh daily quota
(quota 5: 20 of 20 answered with a token per question). Now a link has a daily cap for all its
visitors together, sign-in is limited per client address (the gateway) and per link (the chat
service), and a visitor token that expired answers 401 saying to open the share link again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
from typing import Any

import httpx
from sqlalchemy import select, update

from gateway.app import create_app
from gateway.backends import Backends
from kbcore.db.tables import AccessToken, Visitor
from kbcore.rpc.caller_token import bearer
from services.chat.callers.secret_digest import digest
from tests.harness import READS_ENGLISH, Stack
from tests.sse_client import ask

QUESTIONS = 30
DAILY_CAP = 10


async def shared_application(stack: Stack, name: str, **link: Any) -> tuple[str, str]:
    """A new application (no datasets, so answers are quick) and its share link's token."""
    async with stack.http() as operator:
        app_id = (await operator.post("/api/application", json={"name": name})).json()["data"]["id"]
        made = await operator.post(f"/api/application/{app_id}/access_token", json=link)
    assert made.status_code == 200, made.text
    return app_id, made.json()["data"]["access_token"]


async def ask_as_fresh_visitor(stack: Stack, app_id: str, access_token: str) -> httpx.Response:
    """Sign in anew, open a chat and ask one question: what the quota bypass did."""
    async with stack.http() as anonymous:
        signed_in = await anonymous.post("/api/application/authentication", json={"access_token": access_token})
    assert signed_in.status_code == 200, signed_in.text
    async with stack.http(headers=bearer(signed_in.json()["data"])) as visitor:
        chat_id = (await visitor.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(visitor, chat_id, "年休假有几天？")
    if response.status_code == 200:
        assert frames[-1].data["is_end"] is True, frames[-3:]
    return response


async def assert_capped(responses: list[httpx.Response], sessions, app_id: str) -> None:
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == DAILY_CAP and statuses.count(429) == QUESTIONS - DAILY_CAP, statuses
    refused = next(r for r in responses if r.status_code == 429)
    assert f"{DAILY_CAP} questions per day from all its visitors together" in refused.json()["message"]
    async with sessions() as session:  # the link's use count counts the answered ones only
        used = await session.scalar(select(AccessToken.use_count).where(AccessToken.application_id == app_id))
    assert used == DAILY_CAP


async def test_d6_fresh_visitor_tokens_share_the_links_daily_cap(stack: Stack, sessions, unique: str) -> None:
    app_id, access_token = await shared_application(stack, f"capped-{unique}", access_num=5, daily_cap=DAILY_CAP)
    responses = [await ask_as_fresh_visitor(stack, app_id, access_token) for _ in range(QUESTIONS)]
    await assert_capped(responses, sessions, app_id)


async def test_d6_the_daily_cap_holds_when_fresh_visitors_ask_at_once(stack: Stack, sessions, unique: str) -> None:
    app_id, access_token = await shared_application(
        stack, f"capped-at-once-{unique}", access_num=5, daily_cap=DAILY_CAP
    )
    responses = await asyncio.gather(*(ask_as_fresh_visitor(stack, app_id, access_token) for _ in range(QUESTIONS)))
    await assert_capped(list(responses), sessions, app_id)


async def test_d6_an_expired_visitor_token_says_to_open_the_share_link_again(
    stack: Stack, sessions, unique: str
) -> None:
    app_id, access_token = await shared_application(stack, f"expiring-{unique}")
    async with stack.http() as anonymous:
        signed_in = await anonymous.post("/api/application/authentication", json={"access_token": access_token})
    data = signed_in.json()["data"]
    async with stack.http(headers=bearer(data)) as visitor:
        assert (await visitor.get(f"/api/application/{app_id}/chat/open")).status_code == 200
        async with sessions.begin() as session:  # signed in eight days ago: past the 7-day default
            eight_days_ago = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(days=8)
            await session.execute(
                update(Visitor).where(Visitor.token_hash == digest(data)).values(created_at=eight_days_ago)
            )
        expired = await visitor.get(f"/api/application/{app_id}/chat/open")
    assert expired.status_code == 401 and "open the share link again" in expired.json()["message"], expired.text


async def test_d6_sign_in_is_limited_per_client_address_at_the_gateway(stack: Stack, unique: str) -> None:
    """Only the gateway sees the client's address; a gateway of its own with a limit of 3."""
    _, access_token = await shared_application(stack, f"per-address-{unique}")
    settings = dataclasses.replace(stack.settings, signins_per_ip=3)
    backends = Backends.connect(settings)
    app = create_app(settings, backends)

    async def sign_in(address: str) -> int:
        transport = httpx.ASGITransport(app=app, client=(address, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=READS_ENGLISH) as client:
            reply = await client.post("/api/application/authentication", json={"access_token": access_token})
        if reply.status_code == 429:
            assert "too many sign-ins from this address" in reply.json()["message"]
        return reply.status_code

    try:
        first = [await sign_in("203.0.113.7") for _ in range(4)]
        other = await sign_in("203.0.113.8")
        same_block = await sign_in("2001:db8::1"), await sign_in("2001:db8::2"), await sign_in("2001:db8::3")
        past_block = await sign_in("2001:db8::4")
    finally:
        await backends.close()
    assert first == [200, 200, 200, 429] and other == 200
    assert same_block == (200, 200, 200) and past_block == 429, "an IPv6 client is counted per /64"
