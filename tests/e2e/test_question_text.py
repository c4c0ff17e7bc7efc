"""A question with a control character in it (C0 but tab, line feed and carriage return; DEL; C1)
is refused before anything runs, on MaxKB's ``chat_message`` and on the OpenAI routes alike: a
400 that names the character, in the reader's language, and no record (before: it was asked,
stored and sent to the model). A question typed in paragraphs, with tabs, is asked as usual."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import MAXKB_PAGE_LANGUAGE, Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "ICU探视时间是几点？"
# A bell, an escape that starts a terminal sequence, a unit separator (which str.strip takes for a
# space), DEL, NEL and CSI (C1).
CONTROLS = {
    "\x07": "U+0007",
    "\x1b[31m": "U+001B",
    "\x1f": "U+001F",
    "\x7f": "U+007F",
    "\x85": "U+0085",
    "\x9b": "U+009B",
}
ENGLISH = "the question must not contain control characters other than tabs and line breaks; it has {}"
CHINESE = "问题不能包含制表符和换行以外的控制字符，其中有 {}"


async def open_chat(client: Any) -> str:
    response = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")
    assert response.status_code == 200, response.text
    return str(response.json()["data"])


async def records(client: Any, chat_id: str) -> list[dict[str, Any]]:
    page = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/1/20")
    assert page.status_code == 200, page.text
    return list(page.json()["data"]["records"])


@pytest.mark.parametrize("control", list(CONTROLS))
async def test_chat_message_refuses_a_control_character_in_the_readers_language(stack: Stack, control: str) -> None:
    async with stack.http() as english, stack.http(headers=MAXKB_PAGE_LANGUAGE) as chinese:
        chat_id = await open_chat(english)
        for client, words in ((english, ENGLISH), (chinese, CHINESE)):
            # At the start (where stripping would hide a separator) and inside the question.
            for question in (f"{control}{QUESTION}", f"ICU{control}探视时间是几点？"):
                response, _ = await ask(client, chat_id, question)
                assert response.status_code == 400, response.text
                assert response.json() == {"code": 400, "message": words.format(CONTROLS[control]), "data": None}
        assert await records(english, chat_id) == [], "a refused question is not recorded"


async def test_the_openai_routes_refuse_a_control_character_as_openai_errors(stack: Stack) -> None:
    async with stack.http() as english, stack.http(headers=MAXKB_PAGE_LANGUAGE) as chinese:
        chat = await english.post(
            "/v1/chat/completions",
            json={"model": DEMO_APPLICATION_ID, "messages": [{"role": "user", "content": f"ICU\x1b[2J{QUESTION}"}]},
        )
        text = await chinese.post(
            f"/api/application/{DEMO_APPLICATION_ID}/completions", json={"prompt": f"{QUESTION}\x7f", "stream": True}
        )
    assert chat.status_code == 400, chat.text
    assert chat.json()["error"]["message"] == ENGLISH.format("U+001B"), chat.text
    assert chat.json()["error"]["type"] == "invalid_request_error"
    assert text.status_code == 400, text.text
    assert text.json()["error"]["message"] == CHINESE.format("U+007F"), text.text


async def test_tabs_and_line_breaks_are_a_questions_own(stack: Stack) -> None:
    async with stack.http() as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, f"\t{QUESTION}\r\n另外，\n门诊几点开门？")
        assert response.status_code == 200, response.text
        assert frames[-1].kind == "chunk" and frames[-1].data["is_end"], frames[-1]
        [saved] = await records(client, chat_id)
    assert saved["problem_text"] == f"{QUESTION}\r\n另外，\n门诊几点开门？"


async def test_the_sync_type_refusal_reads_as_one_sentence_in_both_languages(stack: Stack, unique: str) -> None:
    """MaxKB's ``complete`` sync is refused with a sentence whose clauses follow each other (before:
    "… did not change (delete a document to start it over)", one inside the other, in both)."""
    async with stack.http() as english, stack.http(headers=MAXKB_PAGE_LANGUAGE) as chinese:
        made = await english.post("/api/dataset", json={"name": f"sync-words-{unique}", "desc": ""})
        assert made.status_code == 200, made.text
        path = f"/api/dataset/{made.json()['data']['id']}/sync_web"
        in_english = await english.put(path, json={"sync_type": "complete"})
        in_chinese = await chinese.put(path, json={"sync_type": "complete"})
    assert in_english.status_code == in_chinese.status_code == 400
    assert in_english.json()["message"] == (
        "sync_type must be replace: a sync keeps the paragraphs that did not change; "
        "to start a document over, delete it and import it again"
    )
    assert in_chinese.json()["message"] == (
        "sync_type 只支持替换方式：同步会保留没有变化的段落；要从头导入某个文档，请先删除它，再重新导入"
    )
