"""The multi-round hit test and the evaluation route: what the loop gains over one round, on
the operator's own knowledge base, over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kbcore.vocabulary import STOP_REASON
from tests.e2e.test_http_errors import UNKNOWN, assert_envelope
from tests.harness import Stack
from tools.seed_demo import DEMO_APPLICATION_ID, DEMO_DATASET_ID

QUESTIONS = Path(__file__).resolve().parents[2] / "samples" / "kb" / "questions.jsonl"
COMPOUND = "青禾乡2026年的项目支出预算是多少万元？另外，星澜科技规定员工应当在费用发生后多少日内提交报销申请？"
STOP_REASONS = set(STOP_REASON.names) - {"no_datasets"}


def cases(kind: str) -> list[dict[str, Any]]:
    every = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    return [case for case in every if case["kind"] == kind]


async def test_hit_test_rounds_shows_every_round_and_which_round_found_each_paragraph(stack: Stack) -> None:
    async with stack.http() as client:
        reply = await client.get(
            f"/api/dataset/{DEMO_DATASET_ID}/hit_test_rounds", params={"query_text": COMPOUND, "top_number": 3}
        )
    assert reply.status_code == 200, reply.text
    result = reply.json()["data"]
    rounds = result["rounds"]
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    assert result["stop_reason"] in STOP_REASONS
    assert rounds[0]["queries"], "round 1 searched something"
    paragraphs = result["paragraph_list"]
    assert len({p["id"] for p in paragraphs}) == len(paragraphs), "evidence is de-duplicated"
    for r in rounds:
        found_here = {p["id"] for p in paragraphs if p["round"] == r["round"]}
        assert found_here == set(r["new_paragraph_ids"])
    documents = {p["document_name"] for p in paragraphs}
    assert any("青禾乡" in d for d in documents) and any("星澜" in d for d in documents)


async def test_hit_test_rounds_validates_its_input(stack: Stack) -> None:
    async with stack.http() as client:
        path = f"/api/dataset/{DEMO_DATASET_ID}/hit_test_rounds"
        assert_envelope(await client.get(path), 400, "query_text")
        assert_envelope(await client.get(path, params={"query_text": "   "}), 400, "blank")
        assert_envelope(await client.get(path, params={"query_text": "年假", "similarity": 2}), 400, "similarity")
        assert_envelope(await client.get(f"/api/dataset/{UNKNOWN}/hit_test_rounds", params={"query_text": "年假"}), 404)


async def test_operator_lists_applications(stack: Stack) -> None:
    async with stack.http() as client:
        reply = await client.get("/api/application")
    assert reply.status_code == 200
    assert DEMO_APPLICATION_ID in {a["id"] for a in reply.json()["data"]}


async def test_eval_reports_recall_per_round_and_the_loop_never_loses_evidence(stack: Stack) -> None:
    compound = cases("compound")
    unfindable = {
        "id": "nowhere",
        "turns": [{"question": "年假有几天？", "gold": [{"must_contain": "不存在的句子甲乙丙"}]}],
    }
    async with stack.http() as client:
        reply = await client.post(
            f"/api/application/{DEMO_APPLICATION_ID}/eval", json={"cases": [*compound, unfindable]}
        )
    assert reply.status_code == 200, reply.text
    data = reply.json()["data"]
    summary = data["summary"]
    assert summary["cases"] == len(compound) + 1
    assert summary["gold"] == sum(len(c["turns"][-1]["gold"]) for c in compound) + 1
    by_round = summary["by_round"]
    assert by_round[0]["round"] == 1
    recalls = [r["recall"] for r in by_round]
    assert recalls == sorted(recalls), "a later round only adds evidence"
    assert 0 < recalls[-1] < 1, "the unfindable snippet is never found"
    assert sum(summary["stop_reasons"].values()) == summary["cases"]
    scored = {c["id"]: c for c in data["cases"]}
    assert scored["nowhere"]["found_by_round"] == [0] * scored["nowhere"]["rounds_used"]
    for case in compound:
        found = scored[case["id"]]["found_by_round"]
        assert found == sorted(found) and found[-1] <= len(case["turns"][-1]["gold"])


async def test_eval_with_and_without_rewriting_a_follow_up(stack: Stack) -> None:
    # One hit per query: on a knowledge base this small, only a narrow search shows whether
    # the follow-up found its subject (with five hits even the bare question lands nearby).
    followups = cases("followup")
    async with stack.http() as client:
        app = await client.post(
            "/api/application",
            json={"name": "eval-narrow", "dataset_id_list": [DEMO_DATASET_ID], "dataset_setting": {"top_n": 1}},
        )
        path = f"/api/application/{app.json()['data']['id']}/eval"
        with_rewrite = (await client.post(path, json={"cases": followups})).json()["data"]
        without = (await client.post(path, json={"cases": followups, "rewrite": False})).json()["data"]
    assert with_rewrite["rewrite"] is True and without["rewrite"] is False
    bare = {c["id"]: c for c in without["cases"]}
    rewritten = {c["id"]: c for c in with_rewrite["cases"]}
    for case in followups:
        assert bare[case["id"]]["problem_text"] == case["turns"][-1]["question"], "no history, nothing to rewrite"
    assert any(rewritten[c["id"]]["problem_text"] != c["turns"][-1]["question"] for c in followups)
    assert with_rewrite["summary"]["by_round"][0]["recall"] > without["summary"]["by_round"][0]["recall"]


async def test_eval_refuses_what_it_cannot_score(stack: Stack) -> None:
    path = f"/api/application/{DEMO_APPLICATION_ID}/eval"
    no_gold = {"id": "q7", "turns": [{"question": "年假有几天？"}]}
    async with stack.http() as client:
        assert_envelope(await client.post(path, json={"cases": [no_gold]}), 400, "q7", "gold")
        assert_envelope(await client.post(path, json={"cases": []}), 400, "body.cases")
        assert_envelope(await client.post(path, json={"cases": [{"turns": []}]}), 400, "turns")
        case = {"turns": [{"question": "年假", "gold": [{"must_contain": "年假"}]}]}
        assert_envelope(await client.post(f"/api/application/{UNKNOWN}/eval", json={"cases": [case]}), 404)
