"""One question answered end to end on embedded defaults: HTTP → chat → context → retrieval."""

from __future__ import annotations

from tests.harness import Stack
from tests.sse_client import answer_text, ask
from tools.seed_demo import DEMO_APPLICATION_ID

COMPOUND = "青禾乡2026年的项目支出预算是多少万元？另外，星澜科技规定员工应当在费用发生后多少日内提交报销申请？"


async def open_chat(client, app_id: str = DEMO_APPLICATION_ID) -> str:
    reply = await client.get(f"/api/application/{app_id}/chat/open")
    assert reply.status_code == 200, reply.text
    return str(reply.json()["data"])


async def test_compound_question_streams_progress_then_answer_then_saved_record(stack: Stack) -> None:
    async with stack.http() as client:
        chat_id = await open_chat(client)
        response, frames = await ask(client, chat_id, COMPOUND)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"

        phases = [f.data["phase"] for f in frames if f.kind == "progress"]
        assert phases[0] == "context"
        assert {"retrieving", "assessed"} <= set(phases)
        assert phases.index("retrieving") < phases.index("assessed") < phases.index("generating")
        assert phases[-1] == "generating"
        first_retrieving = next(f.data for f in frames if f.kind == "progress" and f.data["phase"] == "retrieving")
        assert first_retrieving["round"] == 1 and first_retrieving["query"]

        chunks = [f for f in frames if f.kind == "chunk"]
        assert chunks and chunks[-1].data["is_end"] is True
        assert all(not c.data["is_end"] for c in chunks[:-1])
        assert frames[-1] is chunks[-1], "nothing may follow the is_end chunk"
        answer = answer_text(frames)
        assert "474.05" in answer and "60日" in answer
        record_id = chunks[-1].data["chat_record_id"]
        assert all(c.data["chat_id"] == chat_id and c.data["chat_record_id"] == record_id for c in chunks)

        detail = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/{chat_id}/chat_record/{record_id}")
        assert detail.status_code == 200
        record = detail.json()["data"]
        assert record["status"] == "answered"
        assert record["answer_text"] == answer
        assert record["agent_stop_reason"] in {"sufficient", "max_rounds", "no_new_evidence", "no_followup_query"}
        assert record["agent_trace"] and record["agent_trace"][0]["round"] == 1
        assert record["context_info"]["enabled"] is True
        cited = {p["document_name"] for p in record["paragraph_list"]}
        assert any("青禾乡" in name for name in cited) and any("星澜" in name for name in cited)
        assert record["problem_text"] == COMPOUND
        # The evidence the record cites is exactly what its trace says each round added, in that order.
        traced = [(pid, step["round"]) for step in record["agent_trace"] for pid in step["new_paragraph_ids"]]
        assert [(p["id"], p["round"]) for p in record["paragraph_list"]] == traced
        assert record["agent_trace"][-1]["total_evidence"] == len(traced)
