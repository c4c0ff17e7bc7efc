"""Fixtures for whole-stack tests that answer with a remote model (a local OpenAI-protocol server)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import ChatReply, FakeOpenAI, plausible_route

ANSWER_CHUNKS = [
    "ICU每天探视时间为16:00至16:30",
    "【云岭县人民医院住院患者探视与陪护管理规定】；",
    "县级定点医院报销80%。",
]


route = plausible_route(lambda: ChatReply.stream(ANSWER_CHUNKS))


@pytest.fixture(scope="module")
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default=route) as server:
        yield server
