"""The model client against fakes that behave like each provider (api.openai.com, DeepSeek,
DashScope, Ollama), with the deployment's defaults: every question's auxiliary jobs and its
answer, as the product sends them.

What a deployment cares about, per provider: the assessments stay real (no silent
``assessment_error``), a refused field costs one request per endpoint and not one per call, the
thinking arrives apart from the answer, and what the client itself adds per call (the time over
the fake's own answer). The fakes answer at once, so the time is the client's and the loopback's.
"""

from __future__ import annotations

import json
import time
from typing import Any

from bench.table import Row, median
from kbcore.models.base import ReasoningDelta
from kbcore.models.openai_client import OpenAIModelClient
from services.retrieval.search.assessment import parse_assessment
from tests.fakes.openai_server import ChatReply, FakeOpenAI, Json, request_kind
from tests.fakes.providers import (
    COMPOUND,
    EVIDENCE,
    HISTORY,
    FakeDashScope,
    FakeDeepSeek,
    FakeOllama,
    FakeStrictOpenAI,
    answer_request,
)

QUESTIONS = 20
QUERIES = ("行政许可 延期 申请材料",)
ASSESSMENT = {"sufficient": False, "missing": "延期申请需要哪些材料", "queries": list(QUERIES)}

# name → (fake, KB_MODEL_PROVIDER): "" is the default, detected from the URL (a local fake: generic).
PROVIDERS: dict[str, tuple[type[FakeOpenAI], str]] = {
    "api.openai.com-like, provider left to detection": (FakeStrictOpenAI, ""),
    "api.openai.com-like, provider openai": (FakeStrictOpenAI, "openai"),
    "DeepSeek-like": (FakeDeepSeek, "deepseek"),
    "DashScope-like": (FakeDashScope, "dashscope"),
    "Ollama-like": (FakeOllama, "ollama"),
}


def _route(body: Json) -> ChatReply:
    kind = request_kind(body)
    if kind == "assess":
        return ChatReply(json.dumps(ASSESSMENT, ensure_ascii=False))
    if kind == "rewrite":
        return ChatReply("云岭县行政许可的决定期限能延长吗？")
    return ChatReply.stream(["根据资料，", "18个工作日。"])


async def _question(client: OpenAIModelClient) -> tuple[bool, int, float]:
    """One question's model work: (a real assessment, thinking characters streamed, seconds)."""
    started = time.perf_counter()
    await client.rewrite(HISTORY, "能延长吗？")
    decision = parse_assessment(await client.assess(COMPOUND, HISTORY, EVIDENCE, [COMPOUND]))
    stream = client.generate(answer_request())
    thinking = sum([len(d.text) async for d in stream.deltas if isinstance(d, ReasoningDelta)])
    return decision.queries == QUERIES, thinking, time.perf_counter() - started


async def _provider(fake: type[FakeOpenAI], provider: str) -> dict[str, Any]:
    with fake(default=_route) as server:
        client = OpenAIModelClient(
            base_url=server.base_url,
            api_key="sk-bench-0123456789",
            chat_model="chat-m",
            aux_model="aux-m",
            disable_thinking=True,
            provider=provider,
            max_retries=0,
            timeout=10,
        )
        try:
            outcomes = [await _question(client) for _ in range(QUESTIONS)]
        finally:
            await client.aclose()
        return {
            "real_assessments": sum(1 for real, _, _ in outcomes if real),
            "thinking_chars": sum(chars for _, chars, _ in outcomes),
            "requests": len(server.chat_bodies),
            "refused": server.refusals,
            "p50_ms": median([seconds for _, _, seconds in outcomes]) * 1000,
        }


async def run() -> tuple[list[Row], dict[str, Any]]:
    raw = {name: await _provider(fake, provider) for name, (fake, provider) in PROVIDERS.items()}
    rows = []
    for name, got in raw.items():
        rows.append(
            Row(
                "providers",
                f"{name}, defaults: {QUESTIONS} questions (rewrite, assessment, answer): real assessments",
                f"{got['real_assessments']}/{QUESTIONS}",
                f"{QUESTIONS}/{QUESTIONS}",
                got["real_assessments"] == QUESTIONS,
            )
        )
        rows.append(
            Row(
                "providers",
                f"{name}: requests sent / refused with 400 (a refused field: once per endpoint)",
                f"{got['requests']} / {got['refused']}",
                "refused ≤ 1",
                got["refused"] <= 1,
            )
        )
        rows.append(
            Row(
                "providers",
                f"{name}: thinking characters streamed apart; client time per question p50",
                f"{got['thinking_chars']}; {got['p50_ms']:.1f} ms",
            )
        )
    return rows, raw
