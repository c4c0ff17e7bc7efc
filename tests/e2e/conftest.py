"""Fixtures for whole-stack tests that answer with a remote model (a local OpenAI-protocol server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind

ANSWER_CHUNKS = [
    "ICU每天探视时间为16:00至16:30",
    "【云岭县人民医院住院患者探视与陪护管理规定】；",
    "县级定点医院报销80%。",
]


def route(body: dict[str, Any]) -> ChatReply:
    """Every model job answered plausibly: sufficient evidence, a rewrite, a streamed answer."""
    kind = request_kind(body)
    if kind == "assess":
        return ChatReply(content=json.dumps({"sufficient": True, "missing": "", "queries": []}, ensure_ascii=False))
    if kind == "rewrite":
        return ChatReply(content="云岭县人民医院ICU探视时间如果遇到节假日怎么安排？")
    if kind == "summarize":
        return ChatReply(content="问：较早的问题｜答：较早的回答")
    return ChatReply.stream(ANSWER_CHUNKS)


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=route) as server:
        yield server
