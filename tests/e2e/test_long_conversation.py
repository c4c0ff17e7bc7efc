"""A long conversation through the whole stack (HTTP → chat → context → retrieval, offline
model): after 29 long turns, an elliptical follow-up still finds its subject, and the subject can
only have come from the compacted summary, since the raw turns still sent never name it."""

from __future__ import annotations

from kbcore.text.tokens import count_tokens
from tests.harness import Stack
from tests.services.context_support import Sessions, add_turns
from tests.sse_client import ask
from tools.seed_demo import DEMO_DATASET_ID

SUBJECT = "青禾乡"
FACETS = ["收入预算总额", "项目支出预算", "基本支出", "“三公”经费预算", "政府采购预算", "农村人居环境整治项目资金"]
FACTS = (
    "2026年青禾乡部门收入预算总额为1286.40万元，其中一般公共预算财政拨款收入1152.60万元，"
    "政府性基金预算财政拨款收入96.00万元，上年结转资金37.80万元。支出预算总额同为1286.40万元，"
    "其中基本支出812.35万元，项目支出474.05万元。"
)
UNNAMED = "与上一年相比，收支总预算增加68.20万元，增长5.6%，主要是农村人居环境整治项目资金增加。"
FOLLOW_UP = "那么其中的基本支出是多少万元？"
TURN_TOKENS = 1000  # 29 such turns are far over the 6000-token budget


def long_answer(sentences: str) -> str:
    answer = sentences
    while count_tokens(answer) < TURN_TOKENS:
        answer += sentences
    return answer


def conversation() -> list[tuple[str, str]]:
    """27 turns about 青禾乡's budget, then two follow-ups that never name it."""
    named = [
        (f"第{i}轮：{SUBJECT}2026年的{FACETS[i % len(FACETS)]}是多少万元？", long_answer(FACTS)) for i in range(1, 28)
    ]
    unnamed = [
        ("这些数字是怎么得出来的？请详细说明。", long_answer(UNNAMED)),
        ("和上一年相比有什么变化？", long_answer(UNNAMED)),
    ]
    return named + unnamed


async def test_follow_up_after_thirty_long_turns_keeps_its_subject_through_the_summary(
    stack: Stack, sessions: Sessions
) -> None:
    async with stack.http() as client:
        created = await client.post(
            "/api/application",
            json={"name": "长会话", "dataset_id_list": [DEMO_DATASET_ID], "dialogue_number": 2},
        )
        assert created.status_code == 200, created.text
        app_id = created.json()["data"]["id"]
        chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        turns = conversation()
        await add_turns(sessions, chat_id, turns)

        response, frames = await ask(client, chat_id, FOLLOW_UP)
        assert response.status_code == 200
        phases = [f.data["phase"] for f in frames if f.kind == "progress"]
        assert phases[:3] == ["context", "compacting", "retrieving"]
        record_id = frames[-1].data["chat_record_id"]
        detail = await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}")
        record = detail.json()["data"]

    info = record["context_info"]
    assert info["compacted_rounds"] > 0 and info["recent_rounds"] + info["compacted_rounds"] == len(turns)
    recent = turns[-info["recent_rounds"] :]
    assert all(SUBJECT not in q + a for q, a in recent), "the raw turns still sent never name the subject"
    assert SUBJECT in record["padding_problem_text"], record["padding_problem_text"]
    assert any(SUBJECT in p["document_name"] for p in record["paragraph_list"])
    assert "812.35" in record["answer_text"]
