"""Credentials over HTTP (MaxKB v1's api_key and access_token routes): a revoked API
key gets 401 on its next call, a rotated key's old value fails and the new one works, an
expired or switched-off share link is refused (401), rotating a link ends its visitors' tokens,
the key list never holds a key, and bad input is a clear 4xx that changes nothing.

An answer already streaming when its key is revoked finishes (the key was valid when the
question was admitted); the key's next call is refused."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from kbcore.db.tables import AccessToken
from kbcore.rpc.caller_token import bearer
from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import MAXKB_PAGE_LANGUAGE as CHINESE
from tests.harness import Stack
from tests.page_words import english_words
from tests.sse_client import ask, parse_frames
from tools.seed_demo import DEMO_APPLICATION_ID


def rfc3339(delta: dt.timedelta) -> str:
    return (dt.datetime.now(dt.UTC) + delta).isoformat().replace("+00:00", "Z")


async def new_application(stack: Stack, name: str) -> str:
    async with stack.http() as operator:
        made = await operator.post("/api/application", json={"name": name})
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["id"])


async def new_key(stack: Stack, app_id: str) -> dict[str, Any]:
    async with stack.http() as operator:
        made = await operator.post(f"/api/application/{app_id}/api_key")
    assert made.status_code == 200, made.text
    return dict(made.json()["data"])


async def open_chat_as(stack: Stack, token: str, app_id: str) -> httpx.Response:
    async with stack.http(headers=bearer(token)) as caller:
        return await caller.get(f"/api/application/{app_id}/chat/open")


async def test_a_revoked_key_gets_401_on_its_next_call_and_revoking_twice_is_409(stack: Stack, unique: str) -> None:
    app_id = await new_application(stack, f"http-revoked-{unique}")
    key = await new_key(stack, app_id)
    assert (await open_chat_as(stack, key["secret_key"], app_id)).status_code == 200
    async with stack.http() as operator:
        revoked = await operator.delete(f"/api/application/{app_id}/api_key/{key['id']}")
        assert revoked.status_code == 200 and revoked.json()["data"]["is_active"] is False, revoked.text
        refused = await open_chat_as(stack, key["secret_key"], app_id)
        assert refused.status_code == 401 and "this API key was revoked" in refused.json()["message"]
        twice = await operator.delete(f"/api/application/{app_id}/api_key/{key['id']}")
        assert twice.status_code == 409 and "already revoked" in twice.json()["message"]
        # In Chinese the kind and the state are Chinese words too, not English ones in a Chinese frame.
        in_chinese = await operator.delete(f"/api/application/{app_id}/api_key/{key['id']}", headers=CHINESE)
        assert in_chinese.status_code == 409 and "撤销" in in_chinese.json()["message"], in_chinese.text
        assert english_words(in_chinese.json()["message"]) == [], in_chinese.text
        again = await operator.put(f"/api/application/{app_id}/api_key/{key['id']}", json={"is_active": True})
        assert again.status_code == 200 and again.json()["data"]["is_active"] is True
    assert (await open_chat_as(stack, key["secret_key"], app_id)).status_code == 200


async def test_an_application_that_does_not_exist_is_named_in_the_readers_language(stack: Stack) -> None:
    async with stack.http(headers=CHINESE) as operator:
        missing = await operator.post("/api/application/no-such-application/api_key")
    assert missing.status_code == 404 and "应用 no-such-application 不存在" in missing.json()["message"], missing.text


async def test_a_rotated_keys_old_value_fails_and_the_new_one_works(stack: Stack, unique: str) -> None:
    app_id = await new_application(stack, f"http-rotated-{unique}")
    key = await new_key(stack, app_id)
    async with stack.http() as operator:
        rotated = await operator.post(f"/api/application/{app_id}/api_key/{key['id']}/rotate")
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["data"]
    assert new["id"] == key["id"] and new["secret_key"] != key["secret_key"]
    assert (await open_chat_as(stack, key["secret_key"], app_id)).status_code == 401
    async with stack.http(headers=bearer(new["secret_key"])) as caller:
        chat_id = (await caller.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(caller, chat_id, "年休假有几天？")
    assert response.status_code == 200 and frames[-1].data["is_end"] is True


async def test_the_key_list_is_masked_and_counts_questions(stack: Stack, unique: str) -> None:
    app_id = await new_application(stack, f"http-listed-{unique}")
    key = await new_key(stack, app_id)
    async with stack.http(headers=bearer(key["secret_key"])) as caller:
        chat_id = (await caller.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        await ask(caller, chat_id, "年休假有几天？")
    async with stack.http() as operator:
        listed = await operator.get(f"/api/application/{app_id}/api_key")
    assert listed.status_code == 200
    secret = key["secret_key"]
    assert secret not in listed.text and secret[16:] not in listed.text, "never the key, nor its secret part"
    [shown] = listed.json()["data"]
    assert shown["masked"] == secret[:16] + "…" and "secret_key" not in shown
    assert shown["use_count"] == 1 and shown["last_used_at"] and shown["is_active"] is True


async def test_an_expired_share_link_is_refused_and_so_are_its_visitors(stack: Stack, sessions, unique: str) -> None:
    app_id = await new_application(stack, f"http-link-expired-{unique}")
    async with stack.http() as operator:
        made = await operator.post(f"/api/application/{app_id}/access_token", json={"access_num": 5, "daily_cap": 50})
        link = made.json()["data"]["access_token"]
        soon = rfc3339(dt.timedelta(hours=2))
        changed = await operator.put(f"/api/application/{app_id}/access_token", json={"expires_at": soon})
        assert changed.status_code == 200 and changed.json()["data"]["expires_at"].startswith(soon[:16])
    async with stack.http() as anonymous:
        visitor = (await anonymous.post("/api/application/authentication", json={"access_token": link})).json()
    async with sessions.begin() as session:  # two hours later
        past = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=1)
        await session.execute(update(AccessToken).where(AccessToken.application_id == app_id).values(expires_at=past))
    async with stack.http() as anonymous:
        refused = await anonymous.post("/api/application/authentication", json={"access_token": link})
    assert refused.status_code == 401 and "this share link has expired" in refused.json()["message"]
    visitor_call = await open_chat_as(stack, visitor["data"], app_id)
    assert visitor_call.status_code == 401 and "this share link has expired" in visitor_call.json()["message"]


async def test_switching_a_link_off_refuses_sign_in_and_rotating_ends_old_visitor_tokens(
    stack: Stack, unique: str
) -> None:
    app_id = await new_application(stack, f"http-link-rotated-{unique}")
    async with stack.http() as operator:
        link = (await operator.post(f"/api/application/{app_id}/access_token")).json()["data"]["access_token"]
    async with stack.http() as anonymous:
        visitor = (await anonymous.post("/api/application/authentication", json={"access_token": link})).json()
    token = visitor["data"]
    assert (await open_chat_as(stack, token, app_id)).status_code == 200
    async with stack.http() as operator:
        off = await operator.put(f"/api/application/{app_id}/access_token", json={"is_active": False})
        assert off.status_code == 200 and off.json()["data"]["is_active"] is False
        async with stack.http() as anonymous:
            refused = await anonymous.post("/api/application/authentication", json={"access_token": link})
        assert refused.status_code == 401 and "switched off" in refused.json()["message"]
        rotated = await operator.put(
            f"/api/application/{app_id}/access_token", json={"access_token_reset": True, "is_active": True}
        )
        assert rotated.status_code == 200, rotated.text
        new_link = rotated.json()["data"]["access_token"]
        assert new_link != link and rotated.json()["data"]["is_active"] is True
        shown = (await operator.get(f"/api/application/{app_id}/access_token")).json()["data"]
        assert shown["access_token"] == new_link
    gone = await open_chat_as(stack, token, app_id)
    assert gone.status_code == 401 and "open the share link again" in gone.json()["message"]
    async with stack.http() as anonymous:
        old = await anonymous.post("/api/application/authentication", json={"access_token": link})
        fresh = await anonymous.post("/api/application/authentication", json={"access_token": new_link})
    assert old.status_code == 404 and fresh.status_code == 200


@pytest.mark.parametrize(
    ("body", "words"),
    [
        # each with a revocation, which must not happen when the expiry is refused
        ({"is_active": False, "expires_at": "2020-01-01T00:00:00Z"}, "in the future"),
        ({"is_active": False, "expires_at": "next tuesday"}, "RFC 3339"),
        ({"is_active": False, "expires_at": "2030-01-01T00:00:00"}, "time zone"),
        ({"is_active": False, "expires_at": "3030-01-01T00:00:00Z"}, "within ten years"),
        ({"is_active": False, "expires_at": "2" * 10_000}, "at most 64 characters"),
        ({"allow_cross_domain": True}, "send at least one of"),
        ({"is_active": "maybe"}, "is_active"),
    ],
)
async def test_bad_key_changes_are_400_and_change_nothing(
    stack: Stack, unique: str, body: dict[str, Any], words: str
) -> None:
    app_id = await new_application(stack, f"http-bad-key-{unique}")
    key = await new_key(stack, app_id)
    async with stack.http() as operator:
        refused = await operator.put(f"/api/application/{app_id}/api_key/{key['id']}", json=body)
        assert refused.status_code == 400 and words in refused.json()["message"], refused.text
        [still] = (await operator.get(f"/api/application/{app_id}/api_key")).json()["data"]
    assert still["is_active"] is True and still["expires_at"] == ""


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"access_num": 0}, "access_num"),
        ({"daily_cap": 1_000_000_000}, "daily_cap"),
        ({"access_num": 100_001, "access_token_reset": True}, "access_num"),
        ({"expires_at": "1999-12-31T23:59:59+08:00", "access_token_reset": True}, "in the future"),
        ({"show_source": True}, "send at least one of"),
    ],
)
async def test_bad_link_changes_are_400_and_rotate_nothing(
    stack: Stack, unique: str, body: dict[str, Any], words: str
) -> None:
    app_id = await new_application(stack, f"http-bad-link-{unique}")
    async with stack.http() as operator:
        made = (await operator.post(f"/api/application/{app_id}/access_token", json={"access_num": 5})).json()["data"]
        refused = await operator.put(f"/api/application/{app_id}/access_token", json=body)
        assert refused.status_code == 400 and words in refused.json()["message"], refused.text
        still = (await operator.get(f"/api/application/{app_id}/access_token")).json()["data"]
    assert (still["access_token"], still["access_num"], still["expires_at"]) == (made["access_token"], 5, "")


async def test_unknown_and_foreign_keys_are_404_and_only_the_operator_may_manage(stack: Stack, unique: str) -> None:
    mine = await new_application(stack, f"http-mine-{unique}")
    theirs = await new_application(stack, f"http-theirs-{unique}")
    my_key, their_key = await new_key(stack, mine), await new_key(stack, theirs)
    async with stack.http() as operator:
        for key_id in ("no-such-key", their_key["id"]):
            for response in (
                await operator.delete(f"/api/application/{mine}/api_key/{key_id}"),
                await operator.put(f"/api/application/{mine}/api_key/{key_id}", json={"is_active": False}),
                await operator.post(f"/api/application/{mine}/api_key/{key_id}/rotate"),
            ):
                assert response.status_code == 404 and "does not exist in application" in response.json()["message"]
        no_link = await operator.get(f"/api/application/{mine}/access_token")
        assert no_link.status_code == 404 and "no share link yet" in no_link.json()["message"]
        unknown_app = await operator.get("/api/application/no-such-app/api_key")
        assert unknown_app.status_code == 404
    assert (await open_chat_as(stack, their_key["secret_key"], theirs)).status_code == 200, "not revoked"
    async with stack.http(headers=bearer(my_key["secret_key"])) as key_holder:
        for response in (
            await key_holder.get(f"/api/application/{mine}/api_key"),
            await key_holder.delete(f"/api/application/{mine}/api_key/{my_key['id']}"),
            await key_holder.put(f"/api/application/{mine}/access_token", json={"access_token_reset": True}),
        ):
            assert response.status_code == 403, response.text
    async with stack.http(headers=bearer("application-not-a-key")) as stranger:
        assert (await stranger.get(f"/api/application/{mine}/api_key")).status_code == 401


async def test_an_answer_streaming_when_its_key_is_revoked_finishes_and_the_next_call_is_401(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    slow = ChatReply.stream(["第一段。", "第二段。", "第三段。"], chunk_delay=0.4)
    fake_model.default = lambda body: (
        slow
        if request_kind(body) == "generate"
        else ChatReply(content='{"sufficient": true, "missing": "", "queries": []}')
    )
    key = await new_key(remote_stack, DEMO_APPLICATION_ID)
    received = bytearray()
    async with remote_stack.http(headers=bearer(key["secret_key"])) as caller:
        chat_id = (await caller.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]

        async def read_answer() -> int:
            url = f"/api/application/chat_message/{chat_id}"
            async with caller.stream("POST", url, json={"message": "年休假有几天？"}) as response:
                async for piece in response.aiter_bytes():
                    received.extend(piece)
            return response.status_code

        answering = asyncio.create_task(read_answer())

        def first_part_or_end() -> bool:
            assert answering.done() or "第一段".encode() in received, bytes(received)[-300:]
            return True

        await eventually(first_part_or_end, what="the answer's first part arriving")
        assert not answering.done(), bytes(received)[-300:]
        async with remote_stack.http() as operator:
            revoked = await operator.delete(f"/api/application/{DEMO_APPLICATION_ID}/api_key/{key['id']}")
        assert revoked.status_code == 200
        assert await answering == 200
        frames = parse_frames(bytes(received))
        answer = "".join(f.data.get("content", "") for f in frames)
        assert frames[-1].data["is_end"] is True and answer.endswith("第三段。"), "the admitted answer finished"
        refused = await caller.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")
    assert refused.status_code == 401 and "revoked" in refused.json()["message"]
    async with remote_stack.http() as operator:
        page = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/10")).json()[
            "data"
        ]
    assert page["records"][-1]["status"] == "answered"
