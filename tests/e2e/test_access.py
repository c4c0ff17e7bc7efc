"""Who may do what: application API keys (stored hashed), share links with a per-visitor daily
quota, visitors confined to their own chats, and the CSV export of the conversation log."""

from __future__ import annotations

import csv
import hashlib
import io

from sqlalchemy import select

from kbcore.db.tables import ApiKey
from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "星澜科技员工累计工作满1年不满10年的，年休假有几天？"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def new_application(client, name: str) -> str:
    reply = await client.post("/api/application", json={"name": name})
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"]["id"])


async def test_an_api_key_is_stored_hashed_and_opens_only_its_application(stack: Stack, sessions, unique: str) -> None:
    async with stack.http() as operator:
        created = (await operator.post(f"/api/application/{DEMO_APPLICATION_ID}/api_key")).json()["data"]
        key = created["secret_key"]
        other_app = await new_application(operator, f"other-{unique}")
    assert key.startswith("application-")
    async with sessions() as session:
        row = await session.scalar(select(ApiKey).where(ApiKey.id == created["id"]))
    assert row is not None and row.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert key not in (row.key_hash, row.prefix), "the key itself is never stored"

    async with stack.http(headers=bearer(key)) as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        response, frames = await ask(client, chat_id, QUESTION)
        assert response.status_code == 200 and frames[-1].data["is_end"] is True
        assert (await client.get(f"/api/application/{other_app}/chat/open")).status_code == 404
        assert (await client.get("/api/dataset")).status_code == 403, "an application key is not the operator"
        assert (await client.post(f"/api/application/{DEMO_APPLICATION_ID}/api_key")).status_code == 403
    async with stack.http(headers=bearer("application-" + "0" * 32)) as stranger:
        refused = await stranger.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
        assert refused.status_code == 401 and refused.json()["code"] == 401


async def test_visitors_see_only_their_own_chats_and_have_a_daily_quota(stack: Stack, unique: str) -> None:
    async with stack.http() as operator:
        app_id = await new_application(operator, f"shared-{unique}")
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={"access_num": 2})).json()["data"]
    assert link["access_num"] == 2

    async with stack.http() as anonymous:
        tokens = []
        for _ in range(2):
            signed_in = await anonymous.post(
                "/api/application/authentication", json={"access_token": link["access_token"]}
            )
            assert signed_in.status_code == 200
            tokens.append(signed_in.json()["data"])
        unknown = await anonymous.post("/api/application/authentication", json={"access_token": "nope"})
        assert unknown.status_code == 404

    async with stack.http(headers=bearer(tokens[0])) as alice, stack.http(headers=bearer(tokens[1])) as bob:
        alice_chat = (await alice.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        for _ in range(2):
            response, _ = await ask(alice, alice_chat, "年休假有几天？")
            assert response.status_code == 200
        exhausted, _ = await ask(alice, alice_chat, "病假呢？")
        assert exhausted.status_code == 429 and "2 questions per visitor per day" in exhausted.json()["message"]

        records = f"/api/application/{app_id}/chat/{alice_chat}/chat_record"
        assert (await bob.get(f"{records}/1/10")).status_code == 404
        assert (await bob.get(f"{records}/1")).status_code == 404
        stolen, _ = await ask(bob, alice_chat, "年休假有几天？")
        assert stolen.status_code == 404, "another visitor's chat does not exist for bob"
        assert (await bob.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).status_code == 404
        bob_chat = (await bob.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, _ = await ask(bob, bob_chat, "年休假有几天？")
        assert response.status_code == 200, "each visitor has a quota of their own"
        assert (await alice.get(f"{records}/1/10")).json()["data"]["total"] == 2
        assert (await alice.get(f"/api/application/{app_id}/chat/export")).status_code == 403


async def test_the_log_exports_as_csv_with_rewritten_questions_stop_reasons_and_gaps(stack: Stack) -> None:
    async with stack.http() as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        await ask(client, chat_id, "云岭县行政许可申请受理后多少个工作日内作出决定？")
        await ask(client, chat_id, "如果需要延长，最多可以延长多少天？")
        exported = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/export")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    assert "attachment" in exported.headers["content-disposition"]
    rows = [r for r in csv.DictReader(io.StringIO(exported.content.decode("utf-8-sig"))) if r["chat_id"] == chat_id]
    assert [r["question"] for r in rows] == [
        "云岭县行政许可申请受理后多少个工作日内作出决定？",
        "如果需要延长，最多可以延长多少天？",
    ]
    follow_up = rows[1]
    assert "行政许可" in follow_up["rewritten_question"], "the rewritten question carries the subject"
    assert follow_up["stop_reason"] in {
        "sufficient",
        "max_rounds",
        "no_new_evidence",
        "no_followup_query",
        "duplicate_query",
    }
    assert int(follow_up["rounds"]) >= 1 and follow_up["status"] == "answered"
    assert set(rows[0]) >= {"missing", "sufficient", "answer"}
