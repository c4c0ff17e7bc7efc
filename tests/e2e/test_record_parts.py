"""Each part of a question, with the offline model's verdict and the paragraphs it quotes, in the
record's HTTP JSON (one record, the chat's record list, the conversation log), so readers need not
parse the answer's wording; a record saved before verdicts were kept reads with them too."""

from __future__ import annotations

import copy
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import ChatRecord
from kbcore.models.base import PartSupport, SupportQuote
from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_DATASET_ID

# Annual leave is in the sample knowledge base, a year-end bonus is not.
COMPOUND = "星澜科技员工入职满一年后每年有几天带薪年假？公司的年终奖一般发几个月工资？"


async def asked(stack: Stack, unique: str, question: str) -> tuple[str, str, str]:
    """A new application on the sample knowledge base, one question: (app, chat, record) ids."""
    async with stack.http() as client:
        created = await client.post(
            "/api/application", json={"name": f"分项-{unique}", "dataset_id_list": [DEMO_DATASET_ID]}
        )
        app_id = created.json()["data"]["id"]
        chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
        response, frames = await ask(client, chat_id, question)
        assert response.status_code == 200 and frames[-1].data["is_end"] is True, frames[-2:]
        listed = (await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
    return app_id, chat_id, listed["records"][0]["id"]


async def record_json(stack: Stack, app_id: str, chat_id: str, record_id: str) -> dict[str, Any]:
    async with stack.http() as client:
        reply = await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}")
    assert reply.status_code == 200, reply.text
    return dict(reply.json()["data"])


async def stored_details(sessions: async_sessionmaker[AsyncSession], record_id: str) -> dict[str, Any]:
    async with sessions() as session:
        row = (await session.execute(select(ChatRecord).where(ChatRecord.id == int(record_id)))).scalar_one()
    return copy.deepcopy(row.details)


def decided(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored part as the model decides it (``PartSupport.verdict``), ids in quote order, once."""
    quotes = tuple(SupportQuote(q["paragraph_id"], "", "", 0.0) for q in stored.get("quotes", []))
    support = PartSupport(stored["part"], quotes, stored.get("verified", False))
    return {
        "part": support.part,
        "verdict": support.verdict.value,
        "paragraph_ids": list(dict.fromkeys(q.paragraph_id for q in quotes)),
    }


async def test_a_saved_record_carries_each_part_s_verdict_and_quoted_paragraphs(
    stack: Stack, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    app_id, chat_id, record_id = await asked(stack, unique, COMPOUND)
    record = await record_json(stack, app_id, chat_id, record_id)
    async with stack.http() as client:
        listed = (await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
        log = (await client.get(f"/api/application/{app_id}/chat/1/10")).json()["data"]

    stored = (await stored_details(sessions, record_id))["retrieval"]["part_support"]
    # The retrieval service sent each verdict with its part: the record keeps it as decided.
    assert [p["verdict"] for p in stored] == ["PART_VERDICT_" + decided(p)["verdict"].upper() for p in stored], stored
    parts = record["parts"]
    assert parts == [decided(p) for p in stored]
    assert len(parts) == 2, parts
    leave, bonus = parts
    assert "年假" in leave["part"] and leave["verdict"] == "verified" and leave["paragraph_ids"], parts
    assert "年终奖" in bonus["part"] and bonus["verdict"] != "verified", parts
    retrieved = {p["id"] for p in record["paragraph_list"]}
    assert {i for p in parts for i in p["paragraph_ids"]} <= retrieved, "a quote comes from a retrieved paragraph"
    assert listed["records"][0]["parts"] == parts
    assert [r["parts"] for r in log["records"]] == [parts]


async def test_a_record_saved_before_verdicts_were_kept_reads_with_them(
    stack: Stack, sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    app_id, chat_id, record_id = await asked(stack, unique, "员工入职满一年后每年有几天带薪年假？")
    ids = [p["id"] for p in (await record_json(stack, app_id, chat_id, record_id))["paragraph_list"]]
    assert ids, "the question retrieves from the sample knowledge base"
    first, last = ids[0], ids[-1]
    details = await stored_details(sessions, record_id)
    # As the details column held parts before the verdict was kept (false and empty fields omitted).
    details["retrieval"]["part_support"] = [
        {
            "part": "年假天数",
            "quotes": [{"paragraph_id": last}, {"paragraph_id": first}, {"paragraph_id": last}],
            "verified": True,
        },
        {"part": "年假能否折现", "quotes": [{"paragraph_id": first}]},
        {"part": "年终奖", "quotes": []},
    ]

    async def saved(changed: dict[str, Any]) -> None:
        async with sessions() as session, session.begin():
            await session.execute(update(ChatRecord).where(ChatRecord.id == int(record_id)).values(details=changed))

    await saved(details)
    assert (await record_json(stack, app_id, chat_id, record_id))["parts"] == [
        {"part": "年假天数", "verdict": "verified", "paragraph_ids": list(dict.fromkeys([last, first]))},
        {"part": "年假能否折现", "verdict": "nearest", "paragraph_ids": [first]},
        {"part": "年终奖", "verdict": "unverifiable", "paragraph_ids": []},
    ]

    details["chat"]["offline_model"] = False
    await saved(details)
    assert (await record_json(stack, app_id, chat_id, record_id))["parts"] == [], "only the offline model judges parts"
