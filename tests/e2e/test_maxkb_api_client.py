"""A MaxKB API client against the gateway, over HTTP as such a client calls it: with an
application's API key, a question asked with ``"stream": false`` (one JSON answer, MaxKB's
non-streaming shape, holding the saved record), and a long chat's records read as MaxKB's page
reads them (``order_asc``). Written from MaxKB v1's views and serializers (docs/api/http.md)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

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
