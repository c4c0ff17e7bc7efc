"""A refusal reads in the caller's language: Chinese by default and whenever Accept-Language
prefers it, English when it prefers English; never the two mixed, on every route (the
OpenAI-compatible ones too). The status and the values a sentence names (an id) are the same in
both."""

from __future__ import annotations

import re

import httpx
import openai

from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

UNKNOWN = "00000000-0000-0000-0000-000000000000"
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
ENGLISH_WORD = re.compile(r"\b[a-z]{3,}\b")
MEDIA_TYPE = re.compile(r"[\w.+-]+/[\w.+-]+")


def chinese(message: str, *values: str) -> None:
    """Chinese words, with the values put in and no English word outside them (a media type such
    as application/json is a name, not English)."""
    rest = MEDIA_TYPE.sub("", message)
    for value in values:
        assert value in rest, message
        rest = rest.replace(value, "")
    assert CJK.search(rest) and not ENGLISH_WORD.search(rest), message


def english(message: str) -> None:
    assert not CJK.search(message) and ENGLISH_WORD.search(message), message


def reader(stack: Stack, accept_language: str | None) -> httpx.AsyncClient:
    client = stack.http()
    del client.headers["Accept-Language"]
    if accept_language is not None:
        client.headers["Accept-Language"] = accept_language
    return client


async def test_a_refusal_reads_chinese_by_default_and_english_when_asked(stack: Stack) -> None:
    missing = f"/api/dataset/{UNKNOWN}/document"
    for accept_language in (None, "zh-CN,zh;q=0.9,en;q=0.5", "fr"):
        async with reader(stack, accept_language) as client:
            response = await client.get(missing)
            assert response.status_code == 404
            chinese(response.json()["message"], UNKNOWN)
    async with reader(stack, "en-US,en;q=0.9") as client:
        response = await client.get(missing)
        assert response.status_code == 404
        english(response.json()["message"])
        assert UNKNOWN in response.json()["message"]


async def test_a_body_that_does_not_fit_names_the_field_in_the_readers_language(stack: Stack) -> None:
    async with reader(stack, None) as client:
        chat_id = (await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
        url = f"/api/application/chat_message/{chat_id}"
        wrong_type = (await client.post(url, json={"message": 42})).json()["message"]
        chinese(wrong_type, "body.message")
        empty = (await client.post(url, json={"message": "   "})).json()["message"]
        chinese(empty)
        hit = f"/api/dataset/{DEMO_DATASET_ID}/hit_test"
        out_of_range = await client.get(hit, params={"query_text": "年假", "top_number": 0})
        assert out_of_range.status_code == 400
        chinese(out_of_range.json()["message"], "query.top_number", "1")
    async with reader(stack, "en") as client:
        wrong_type = (await client.post(url, json={"message": 42})).json()["message"]
        assert wrong_type.startswith("body.message: ") and "string" in wrong_type


async def test_the_edge_refuses_in_the_readers_language(stack: Stack) -> None:
    too_big = b'{"message": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    for accept_language, check in ((None, chinese), ("en", english)):
        async with reader(stack, accept_language) as client:
            response = await client.post("/api/dataset", content=too_big, headers={"content-type": "application/json"})
            assert response.status_code == 413
            check(response.json()["message"])
            wrong_type = await client.post("/api/dataset", content=b"name=x", headers={"content-type": "text/plain"})
            assert wrong_type.status_code == 415
            check(wrong_type.json()["message"])


async def test_an_unknown_address_and_method_read_in_the_readers_language(stack: Stack) -> None:
    for accept_language, check in ((None, chinese), ("en", english)):
        async with reader(stack, accept_language) as client:
            unknown = await client.get("/api/no-such-thing")
            assert unknown.status_code == 404
            check(unknown.json()["message"])
            wrong_method = await client.put("/api/dataset")
            assert wrong_method.status_code == 405
            check(wrong_method.json()["message"])


async def test_the_openai_sdk_reads_a_refusal_in_chinese_unless_it_asks_for_english(stack: Stack) -> None:
    base = f"{stack.url}/api/application/{DEMO_APPLICATION_ID}"
    for headers, check in (({}, chinese), ({"Accept-Language": "en-US"}, english)):
        client = openai.AsyncOpenAI(
            base_url=base, api_key="not-a-key", max_retries=0, timeout=60, default_headers=headers
        )
        try:
            await client.chat.completions.create(model="", messages=[{"role": "user", "content": "年假"}])
        except openai.AuthenticationError as refused:
            body = refused.body
            assert isinstance(body, dict), body
            check(str(body["message"]))
        else:
            raise AssertionError("an unknown key was let in")
        finally:
            await client.close()
