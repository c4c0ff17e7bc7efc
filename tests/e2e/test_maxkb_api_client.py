"""A MaxKB API client against the gateway, over HTTP as such a client calls it: with an
application's API key, a question asked with ``"stream": false`` (one JSON answer, MaxKB's
non-streaming shape, holding the saved record), and a long chat's records read as MaxKB's page
reads them (``order_asc``). Written from MaxKB v1's views and serializers (docs/api/http.md)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import insert

from kbcore.db.tables import ChatRecord, utcnow
from tests.harness import Stack
from tools.seed_demo import DEMO_DATASET_ID

COMPOUND = "云岭县人民医院ICU每天的探视时间是几点到几点？城乡居民医保参保人在县级定点医院住院，报销比例是多少？"


async def data_of(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["code"] == 200, body
    return body["data"]


async def own_application(stack: Stack, unique: str) -> tuple[str, str]:
    """An application of this test's own over the sample documents, and an API key of it."""
    async with stack.http() as operator:
        made = await data_of(
            await operator.post(
                "/api/application", json={"name": f"maxkb-client-{unique}", "dataset_id_list": [DEMO_DATASET_ID]}
            )
        )
        key = await data_of(await operator.post(f"/api/application/{made['id']}/api_key"))
    return str(made["id"]), str(key["secret_key"])


async def open_chat(client: httpx.AsyncClient, app_id: str) -> str:
    return str(await data_of(await client.get(f"/api/application/{app_id}/chat/open")))


async def test_stream_false_answers_the_saved_record_as_one_json_with_its_rounds(stack: Stack, unique: str) -> None:
    app_id, key = await own_application(stack, unique)
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        chat_id = await open_chat(client, app_id)
        response = await client.post(
            f"/api/application/chat_message/{chat_id}", json={"message": COMPOUND, "re_chat": False, "stream": False}
        )
        assert response.headers["content-type"].startswith("application/json")
        answer = await data_of(response)
        record = await data_of(await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{answer['id']}"))

    assert answer["chat_id"] == chat_id and answer["operate"] is True and answer["is_end"] is True
    assert answer["content"].strip() and answer["content"] == record["answer_text"]
    assert answer["answer_list"] == record["answer_text_list"][0]
    [card] = answer["answer_list"]
    rounds = answer["agent_trace"]
    assert rounds and rounds[0]["round"] == 1 and rounds[0]["queries"], "the rounds in it"
    assert (
        card["content"] == answer["content"]
        and "Search round 1: " + rounds[0]["queries"][0] in card["reasoning_content"]
    )
    assert answer["prompt_tokens"] == record["message_tokens"] > 0
    assert answer["completion_tokens"] == record["answer_tokens"] > 0
    assert {name: answer[name] for name in record} == record, "the record as the record route reads it"
    assert record["status"] == "answered"


async def test_stream_true_is_still_the_event_stream(stack: Stack, unique: str) -> None:
    app_id, key = await own_application(stack, unique)
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        chat_id = await open_chat(client, app_id)
        response = await client.post(
            f"/api/application/chat_message/{chat_id}", json={"message": "图书馆几点开门？", "stream": True}
        )
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert '"is_end":true' in response.text


@pytest.mark.parametrize("stream", ["false", "true", 0, 1, None, [], {}])
async def test_stream_that_is_not_a_boolean_is_refused_and_nothing_is_asked(
    stack: Stack, unique: str, stream: Any
) -> None:
    app_id, key = await own_application(stack, unique)
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        chat_id = await open_chat(client, app_id)
        response = await client.post(
            f"/api/application/chat_message/{chat_id}", json={"message": "图书馆几点开门？", "stream": stream}
        )
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["code"] == 400 and body["data"] is None
        assert body["message"].startswith("body.stream: must be true (the answer as an event stream) or false")
        records = await data_of(await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/20"))
    assert records["total"] == 0 and records["records"] == []


async def test_the_refusal_of_a_stream_that_is_not_a_boolean_reads_in_chinese(stack: Stack, unique: str) -> None:
    app_id, key = await own_application(stack, unique)
    headers = {"Authorization": f"Bearer {key}", "Accept-Language": "zh-CN"}
    async with stack.http(headers=headers) as client:
        chat_id = await open_chat(client, app_id)
        response = await client.post(
            f"/api/application/chat_message/{chat_id}", json={"message": "图书馆几点开门？", "stream": "false"}
        )
    assert response.status_code == 400
    assert response.json()["message"].startswith("body.stream：须为 JSON 布尔值 true"), response.json()


async def long_chat(stack: Stack, sessions: Any, unique: str, questions: int) -> tuple[str, str, str]:
    """A chat of this test's own application with ``questions`` answered records, a second apart."""
    app_id, key = await own_application(stack, unique)
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        chat_id = await open_chat(client, app_id)
    start = utcnow()
    rows = [
        {
            "chat_id": chat_id,
            "question": f"问题{i}",
            "answer": f"回答{i}",
            "status": "answered",
            "details": {},
            "created_at": start + timedelta(seconds=i),
            "updated_at": start + timedelta(seconds=i),
        }
        for i in range(questions)
    ]
    async with sessions.begin() as session:
        await session.execute(insert(ChatRecord), rows)
    return app_id, key, chat_id


async def questions_on(client: httpx.AsyncClient, path: str, **params: str) -> tuple[list[str], int]:
    page = await data_of(await client.get(path, params=params))
    return [r["problem_text"] for r in page["records"]], page["total"]


async def test_order_asc_true_pages_from_the_newest_question_back_as_maxkbs_page_reads_them(
    stack: Stack, sessions: Any, unique: str
) -> None:
    app_id, key, chat_id = await long_chat(stack, sessions, unique, 25)
    records = f"/api/application/{app_id}/chat/{chat_id}/chat_record"
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        newest, total = await questions_on(client, f"{records}/1/20", order_asc="true")
        older, _ = await questions_on(client, f"{records}/2/20", order_asc="true")
        first, _ = await questions_on(client, f"{records}/1/20", order_asc="false")
        unset, _ = await questions_on(client, f"{records}/1/20")
    assert total == 25
    assert newest == [f"问题{i}" for i in range(24, 4, -1)], "the newest 20, newest first, as MaxKB answers"
    assert older == [f"问题{i}" for i in range(4, -1, -1)]
    assert first == unset == [f"问题{i}" for i in range(20)], "from the first question"


async def test_maxkbs_page_opens_a_long_chat_on_its_newest_questions(stack: Stack, sessions: Any, unique: str) -> None:
    """What the page draws from its first call: the page's records sorted by ``create_time``."""
    app_id, key, chat_id = await long_chat(stack, sessions, unique, 30)
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        page = await data_of(
            await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/20", params={"order_asc": "true"})
        )
    drawn = [r["problem_text"] for r in sorted(page["records"], key=lambda r: r["create_time"])]
    assert drawn == [f"问题{i}" for i in range(10, 30)]


async def test_order_asc_that_is_not_a_boolean_is_refused_with_its_name(
    stack: Stack, sessions: Any, unique: str
) -> None:
    app_id, key, chat_id = await long_chat(stack, sessions, unique, 1)
    async with stack.http(headers={"Authorization": f"Bearer {key}"}) as client:
        response = await client.get(
            f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/20", params={"order_asc": "newest"}
        )
    assert response.status_code == 400, response.text
    assert response.json()["message"].startswith("query.order_asc: "), response.json()
