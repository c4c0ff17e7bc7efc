"""An application's share page as its operator sets it up, over HTTP: the opening message with
suggested questions, the name, logo and colour visitors see, the disclaimer and the input's hint,
and the switches that hide sources and the trace from visitors (removed on the server, not only
left undrawn). Hostile values are refused with a sentence and nothing of the update is kept."""

from __future__ import annotations

import base64
import io
from typing import Any

import httpx
from PIL import Image

from kbcore.rpc.caller_token import bearer
from tests.harness import Stack
from tests.sse_client import ask

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"


def png_logo(size: int = 32) -> str:
    image = Image.new("RGB", (size, size), (37, 99, 235))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


LOOK: dict[str, Any] = {
    "prologue": "您好，我是医院的问答助手。\n- ICU几点能探视？\n- 普通病区每次能去几个人？",
    "title": "云岭医院问答",
    "logo": png_logo(),
    "accent_color": "#0F766E",
    "disclaimer": True,
    "disclaimer_value": "回答仅供参考，以医院公告为准。",
    "placeholder": "想问医院的什么？",
    "show_source": False,
    "show_trace": False,
}


async def new_application(operator: httpx.AsyncClient, name: str, **page: Any) -> str:
    dataset = (await operator.get("/api/dataset")).json()["data"][0]["id"]
    made = await operator.post("/api/application", json={"name": name, "dataset_id_list": [dataset], **page})
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["id"])


async def visitor_of(operator: httpx.AsyncClient, app_id: str) -> str:
    link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]
    signed_in = await operator.post("/api/application/authentication", json={"access_token": link["access_token"]})
    return str(signed_in.json()["data"])


async def test_a_visitor_sees_the_operators_look_and_no_sources_or_trace_when_they_are_hidden(
    stack: Stack, unique: str
) -> None:
    async with stack.http() as operator:
        app_id = await new_application(operator, f"look-{unique}", **LOOK)
        visitor_token = await visitor_of(operator, app_id)
        async with stack.http(headers=bearer(visitor_token)) as visitor:
            seen = (await visitor.get(f"/api/application/{app_id}")).json()["data"]
            profile = (await visitor.get("/api/application/profile")).json()["data"]
            chat_id = (await visitor.get(f"/api/application/{app_id}/chat/open")).json()["data"]
            answered, frames = await ask(visitor, chat_id, QUESTION)
            assert answered.status_code == 200 and frames[-1].data.get("is_end") is True
            mine = (await visitor.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
        full = (await operator.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]

    expected = {**LOOK, "accent_color": "#0f766e", "progress_mode": seen["progress_mode"]}
    assert {key: seen[key] for key in expected} == expected
    assert profile["name"] == "云岭医院问答" and profile["icon"] == LOOK["logo"], "MaxKB's page reads the same look"
    assert profile["disclaimer"] is True and profile["disclaimer_value"] == LOOK["disclaimer_value"]
    assert profile["show_source"] is False

    [shown], [whole] = mine["records"], full["records"]
    assert "16:00" in shown["answer_text"]
    assert shown["paragraph_list"] == [] and shown["agent_trace"] == [] and shown["parts"] == []
    assert shown["agent_stop_reason"] == whole["agent_stop_reason"] != ""
    assert whole["paragraph_list"] and whole["agent_trace"], "the operator still reads the whole record"


async def test_hostile_page_values_are_refused_with_a_sentence_and_nothing_is_kept(stack: Stack, unique: str) -> None:
    svg = "data:image/svg+xml;base64," + base64.b64encode(b"<svg onload='alert(1)'/>").decode()
    not_png = "data:image/png;base64," + base64.b64encode(b"this is a text file, not a picture").decode()
    big = png_logo(1) + "A" * (5 * 1024 * 1024)
    refused: list[tuple[dict[str, Any], int, str]] = [
        ({"logo": svg}, 400, "SVG can carry scripts"),
        ({"logo": not_png}, 400, "not a PNG image"),
        ({"logo": "https://example.com/logo.png"}, 400, "data: URL"),
        ({"logo": big}, 413, "larger than 1 MiB"),
        ({"logo": png_logo(1) + "A" * 400_000}, 400, "logo"),
        ({"accent_color": "red"}, 400, "#rrggbb"),
        ({"title": "第一行\n第二行"}, 400, "one line"),
        ({"prologue": "\n".join("- 问" for _ in range(1000))}, 400, "suggests 1000 questions"),  # 3,999 characters
        ({"prologue": "- " + "长" * 300}, 400, "suggested question is at most 200 characters"),
    ]
    async with stack.http() as operator:
        app_id = await new_application(operator, f"hostile-{unique}", **LOOK)
        before = (await operator.get(f"/api/application/{app_id}")).json()["data"]
        for page, status, words in refused:
            body = {"name": f"hostile-{unique}", **LOOK, **page}
            answer = await operator.put(f"/api/application/{app_id}", json=body)
            assert answer.status_code == status, (page.keys(), answer.text[:300])
            assert words in answer.json()["message"], answer.json()["message"]
        after = (await operator.get(f"/api/application/{app_id}")).json()["data"]
    assert after == before, "a refused update changed the application"


async def test_an_opening_message_with_html_and_a_javascript_link_is_kept_as_text(stack: Stack, unique: str) -> None:
    """Stored as written (the page renders it inert; the browser test shows it)."""
    prologue = '<img src=x onerror="alert(1)">[点我](javascript:alert(1))\n- 正常的问题'
    async with stack.http() as operator:
        app_id = await new_application(operator, f"inert-{unique}", prologue=prologue)
        assert (await operator.get(f"/api/application/{app_id}")).json()["data"]["prologue"] == prologue
