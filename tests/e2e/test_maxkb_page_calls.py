"""MaxKB v1's own chat page against the gateway, call by call as the page makes them (docs/http.md,
"MaxKB's chat page"): its headers (the token bare in ``AUTHORIZATION``, no ``Bearer``), its body
fields, and its way of reading the answer stream. Written from the page's observed behaviour.

The page reads a stream with one regular expression over ``data:`` blocks (a one-line block
ending in ``}`` followed by a blank line); ``event:`` lines and comments are skipped, and any
such line *between* two blocks read at once makes it show their text twice. Every block must
carry ``chat_id`` and ``chat_record_id``, every block before the last a string ``content``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from sqlalchemy import insert, select

from kbcore.db.tables import Chat, ChatRecord, Visitor, utcnow
from services.chat.callers.secret_digest import digest
from tests.harness import MAXKB_PAGE_LANGUAGE, Stack
from tools.seed_demo import DEMO_APPLICATION_ID

PAGE_BLOCK = re.compile(r"data:.*}\n\n")
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？另外，医保在县级定点医院住院报销比例是多少？"
# What the page sends with a question (no uploads, no workflow form).
PAGE_BODY = {
    "re_chat": False,
    "image_list": [],
    "document_list": [],
    "audio_list": [],
    "video_list": [],
    "other_list": [],
    "form_data": {},
}


def page_chunks(body: str) -> list[dict[str, Any]]:
    """The page's reading of a stream: its regular expression, JSON after the first ``data:``,
    stopping at ``is_end``."""
    chunks = []
    for block in PAGE_BLOCK.findall(body):
        chunk = json.loads(block.strip().removeprefix("data:"))
        chunks.append(chunk)
        if chunk.get("is_end"):
            break
    return chunks


def as_page(token: str = "") -> dict[str, str]:
    """The page's headers: the token bare, or none before it has one."""
    return {"AUTHORIZATION": token} if token else {}


async def envelope(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


async def share_link(stack: Stack) -> tuple[str, str]:
    """The demo application (the sample knowledge base) and its share link."""
    async with stack.http() as operator:
        link = await envelope(await operator.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token", json={}))
    return DEMO_APPLICATION_ID, str(link["access_token"])


async def test_the_page_opens_answers_shows_sources_keeps_history_and_renames_and_deletes(stack: Stack) -> None:
    app_id, access_token = await share_link(stack)
    async with stack.http(anonymous=True, headers=MAXKB_PAGE_LANGUAGE) as page:
        server = await envelope(await page.get("/api/profile"))
        assert server["IS_XPACK"] is False and server["XPACK_LICENSE_IS_VALID"] is False

        token = await envelope(await page.post("/api/application/authentication", json={"access_token": access_token}))
        assert isinstance(token, str) and token
        profile = await envelope(await page.get("/api/application/profile", headers=as_page(token)))
        assert profile["id"] == app_id and profile["name"] and profile["type"] == "SIMPLE"
        assert profile["prologue"].strip() and profile["show_source"] is True
        listed = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(token)))
        assert listed["records"] == []

        chat_id = await envelope(await page.get(f"/api/application/{app_id}/chat/open", headers=as_page(token)))
        streamed = await page.post(
            f"/api/application/chat_message/{chat_id}",
            json={"message": QUESTION, **PAGE_BODY},
            headers={"Content-Type": "application/json", **as_page(token)},
        )
        assert streamed.status_code == 200 and streamed.headers["content-type"].startswith("text/event-stream")
        assert "event:" not in streamed.text and "\n:" not in streamed.text, "nothing but data: blocks"
        chunks = page_chunks(streamed.text)
        assert chunks[-1]["is_end"] is True
        assert all(c["chat_id"] == chat_id and c["chat_record_id"] for c in chunks)
        assert all(isinstance(c["content"], str) for c in chunks[:-1])
        thinking = "".join(c["reasoning_content"] for c in chunks)
        assert "第 1 轮检索" in thinking, "the rounds show in the page's thinking block"
        answer = "".join(c["content"] for c in chunks[:-1])
        assert answer.strip() and "第 1 轮检索" not in answer
        record_id = chunks[-1]["chat_record_id"]

        # Right after is_end the page lists the history and reads the record's sources.
        listed = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(token)))
        assert [(c["id"], c["abstract"]) for c in listed["records"]] == [(chat_id, QUESTION)]
        record = await envelope(
            await page.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}", headers=as_page(token))
        )
        [[card]] = record["answer_text_list"]
        assert card["content"] == record["answer_text"]
        assert "第 1 轮检索" in card["reasoning_content"], "a reload shows the rounds as the stream did"
        whole, search, chat = record["run_time"], record["search_step"]["run_time"], record["chat_step"]["run_time"]
        assert isinstance(whole, float) and whole >= search + chat and search > 0 and chat > 0, (
            "the whole answer's time"
        )
        assert record["vote_status"] == "-1" and isinstance(record["create_time"], str)
        sources = record["paragraph_list"]
        assert sources and all(p["document_name"] and p["dataset_name"] and p["is_active"] for p in sources)
        assert all(isinstance(p["similarity"], float) and isinstance(p["meta"], dict) for p in sources)

        # A reload signs in again, sending the token it holds: the same visitor, the same chats.
        again = await envelope(
            await page.post(
                "/api/application/authentication", json={"access_token": access_token}, headers=as_page(token)
            )
        )
        kept = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(again)))
        assert [c["id"] for c in kept["records"]] == [chat_id]
        history = await envelope(
            await page.get(
                f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/20",
                params={"order_asc": "true"},
                headers=as_page(again),
            )
        )
        assert history["total"] == 1 and history["records"][0]["problem_text"] == QUESTION

        path = f"/api/application/{app_id}/chat/client/{chat_id}"
        assert await envelope(await page.put(path, json={"abstract": "探视和报销"}, headers=as_page(again))) is True
        renamed = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(again)))
        assert renamed["records"][0]["abstract"] == "探视和报销"
        assert await envelope(await page.request("DELETE", path, json={}, headers=as_page(again))) is True
        emptied = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(again)))
        assert emptied["records"] == [] and emptied["total"] == 0


async def refused(response: httpx.Response, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == status and body["data"] is None and words in body["message"], body


async def test_credentials_that_are_not_the_visitors_own_are_refused_and_change_nothing(stack: Stack) -> None:
    app_id, access_token = await share_link(stack)
    async with stack.http() as page:
        token = await envelope(await page.post("/api/application/authentication", json={"access_token": access_token}))
        key = await envelope(await page.post(f"/api/application/{app_id}/api_key"))
        other_app = await envelope(await page.post("/api/application", json={"name": "另一个应用"}))
        other_link = await envelope(await page.post(f"/api/application/{other_app['id']}/access_token", json={}))
        stranger = await envelope(
            await page.post("/api/application/authentication", json={"access_token": other_link["access_token"]})
        )
        listing = f"/api/application/{app_id}/chat/client/1/20"
        await refused(await page.get(listing, headers=as_page(key["secret_key"])), 403, "only a share-link visitor")
        await refused(await page.get(listing), 403, "only a share-link visitor")  # the operator (its token)
        await refused(await page.get(listing, headers={"AUTHORIZATION": "Bearer"}), 401, "holds no token")
        await refused(await page.get(listing, headers={"AUTHORIZATION": ""}), 401, "holds no token")
        await refused(await page.get(listing, headers=as_page(stranger)), 404, "not found")
        # Another application's visitor token does not carry its visitor over to this link.
        fresh = await envelope(
            await page.post(
                "/api/application/authentication", json={"access_token": access_token}, headers=as_page(stranger)
            )
        )
        assert fresh not in (stranger, token)


async def test_any_authorization_header_is_judged_by_its_token_and_none_names_nobody(stack: Stack) -> None:
    """From loopback too: a visitor's page behind a same-host proxy stays a visitor, a token
    nobody issued is refused, and a page with no token at all is nobody (not the operator)."""
    _, access_token = await share_link(stack)
    async with stack.http(anonymous=True) as page:
        token = await envelope(await page.post("/api/application/authentication", json={"access_token": access_token}))
        await refused(await page.get("/api/dataset", headers=as_page(token)), 403, "")
        await refused(await page.get("/api/dataset", headers=as_page("nobody-issued-this")), 401, "")
        await refused(await page.get("/api/dataset"), 401, "token")
        assert (await page.get("/api/dataset", headers=as_page(stack.operator_token))).status_code == 200


@pytest.mark.parametrize(
    ("title", "words"), [("名" * 10_000, "at most 200 characters"), ("年\x00假", "NUL"), ("  ", "empty")]
)
async def test_a_bad_chat_name_is_refused_with_a_sentence_and_nothing_changes(
    stack: Stack, title: str, words: str
) -> None:
    app_id, access_token = await share_link(stack)
    async with stack.http(anonymous=True) as page:
        token = await envelope(await page.post("/api/application/authentication", json={"access_token": access_token}))
        chat_id = await envelope(await page.get(f"/api/application/{app_id}/chat/open", headers=as_page(token)))
        await page.post(
            f"/api/application/chat_message/{chat_id}", json={"message": "图书馆几点开门？"}, headers=as_page(token)
        )
        path = f"/api/application/{app_id}/chat/client/{chat_id}"
        await refused(await page.put(path, json={"abstract": title}, headers=as_page(token)), 400, words)
        listed = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(token)))
        assert listed["records"][0]["abstract"] == "图书馆几点开门？"


async def test_ten_thousand_chats_come_in_pages(stack: Stack, sessions) -> None:
    app_id, access_token = await share_link(stack)
    async with stack.http(anonymous=True) as page:
        token = await envelope(await page.post("/api/application/authentication", json={"access_token": access_token}))
    async with sessions() as session:
        visitor_id = await session.scalar(select(Visitor.id).where(Visitor.token_hash == digest(token)))
    now = utcnow()
    chats = [
        {"id": f"bulk-{i:05d}", "application_id": app_id, "visitor_id": visitor_id, "abstract": f"问题{i}"}
        for i in range(10_000)
    ]
    async with sessions.begin() as session:
        await session.execute(insert(Chat), [{**c, "created_at": now, "updated_at": now} for c in chats])
        await session.execute(
            insert(ChatRecord),
            [
                {
                    "chat_id": c["id"],
                    "question": c["abstract"],
                    "answer": "略",
                    "status": "answered",
                    "details": {},
                    "created_at": now,
                    "updated_at": now,
                }
                for c in chats
            ],
        )
    async with stack.http(anonymous=True) as page:
        first = await envelope(await page.get(f"/api/application/{app_id}/chat/client/1/20", headers=as_page(token)))
        last = await envelope(await page.get(f"/api/application/{app_id}/chat/client/500/20", headers=as_page(token)))
        beyond = await envelope(await page.get(f"/api/application/{app_id}/chat/client/501/20", headers=as_page(token)))
        await refused(
            await page.get(f"/api/application/{app_id}/chat/client/1/101", headers=as_page(token)), 400, "less than"
        )
    assert first["total"] == last["total"] == 10_000 and len(first["records"]) == len(last["records"]) == 20
    assert not {c["id"] for c in first["records"]} & {c["id"] for c in last["records"]}
    assert beyond["records"] == []
