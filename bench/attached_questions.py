"""Questions attached to paragraphs, measured on dev-hard through the public routes, as an
operator would use them after reading the log: the 8 cases the loop worked hardest on (first
those whose gold round 1 missed, then those that took the most rounds) get their question
attached to each of their gold paragraphs: as the visitor asked it, or for a follow-up as the
log shows it rewritten (turn 2's "那报的比例呢？" alone would match any such follow-up). Then
every case is asked again: those 8 should have every gold paragraph after round 1, and no other
case may find less, after round 1 or after the loop.

Each case keeps the loop's own rounds, so the figures are the evaluation route's, the same as
the ``quality`` section's dev-hard rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from bench.processes import gateway_client, running_stack
from bench.table import Row

HARD = Path(__file__).resolve().parent.parent / "samples" / "kb" / "questions-hard.jsonl"
SECTION = "attached questions"
CASES_ATTACHED = 8
TIMEOUT = httpx.Timeout(900.0, connect=10.0)


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in HARD.read_text(encoding="utf-8").splitlines() if line.strip()]


async def _evaluate(client: httpx.AsyncClient, app_id: str, cases: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    reply = await client.post(f"/api/application/{app_id}/eval", json={"cases": cases})
    reply.raise_for_status()
    return {c["id"]: c for c in reply.json()["data"]["cases"]}


def _first_round_complete(score: dict[str, Any]) -> bool:
    return bool(score["found_by_round"]) and score["found_by_round"][0] == score["gold"]


def _final(score: dict[str, Any]) -> int:
    return int(score["found_by_round"][-1]) if score["found_by_round"] else 0


async def _paragraphs(client: httpx.AsyncClient, dataset_ids: list[str]) -> list[dict[str, Any]]:
    """Every paragraph of the datasets, with the dataset and document it is in."""
    found: list[dict[str, Any]] = []
    for dataset_id in dataset_ids:
        for document in (await client.get(f"/api/dataset/{dataset_id}/document")).json()["data"]:
            base = f"/api/dataset/{dataset_id}/document/{document['id']}/paragraph"
            found += (await client.get(f"{base}/1/200")).json()["data"]["records"]
    return found


def _hardest(cases: list[dict[str, Any]], scores: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases an operator reading the log would pick first."""
    ranked = sorted(
        cases, key=lambda c: (_first_round_complete(scores[c["id"]]), -scores[c["id"]]["rounds_used"], c["id"])
    )
    return ranked[:CASES_ATTACHED]


async def _attach(
    client: httpx.AsyncClient, case: dict[str, Any], score: dict[str, Any], paragraphs: list[dict[str, Any]]
) -> int:
    """The case's question attached to each of its gold paragraphs; how many it was attached to."""
    turn = case["turns"][-1]
    question = score["problem_text"] if case["kind"] == "followup" else turn["question"]
    attached = 0
    for gold in turn["gold"]:
        paragraph = next(p for p in paragraphs if gold["must_contain"] in p["content"])
        url = (
            f"/api/dataset/{paragraph['dataset_id']}/document/{paragraph['document_id']}"
            f"/paragraph/{paragraph['id']}/problem"
        )
        reply = await client.post(url, json={"content": question})
        reply.raise_for_status()
        attached += 1
    return attached


async def run() -> tuple[list[Row], dict[str, Any]]:
    cases = _cases()
    async with running_stack({}) as (info, demo_app), gateway_client(info, timeout=TIMEOUT) as client:
        demo = (await client.get(f"/api/application/{demo_app}")).json()["data"]
        before = await _evaluate(client, demo_app, cases)
        chosen = _hardest(cases, before)
        paragraphs = await _paragraphs(client, demo["dataset_id_list"])
        attached = sum([await _attach(client, c, before[c["id"]], paragraphs) for c in chosen])
        after = await _evaluate(client, demo_app, cases)
    chosen_ids = {c["id"] for c in chosen}
    fixed = [i for i in chosen_ids if _first_round_complete(after[i])]
    others = [c["id"] for c in cases if c["id"] not in chosen_ids]
    lowered = [
        i
        for i in others
        if after[i]["found_by_round"][0] < before[i]["found_by_round"][0] or _final(after[i]) < _final(before[i])
    ]
    one_round = (
        sum(_first_round_complete(s) for s in before.values()),
        sum(_first_round_complete(s) for s in after.values()),
    )
    missed = [i for i in chosen_ids if not _first_round_complete(before[i])]
    rows = [
        Row(
            SECTION,
            f"dev-hard: the {len(chosen)} hardest cases ({', '.join(sorted(chosen_ids))}; {len(missed)} of them "
            f"missed gold in round 1), questions attached to their {attached} gold paragraphs: every gold after round 1",
            f"{len(fixed)}/{len(chosen)}",
        ),
        Row(
            SECTION,
            "dev-hard: of those, the cases round 1 missed: every gold after round 1 now",
            f"{sum(i in fixed for i in missed)}/{len(missed)}",
        ),
        Row(
            SECTION,
            "dev-hard: the hardest cases, rounds used before → after",
            f"{sum(before[i]['rounds_used'] for i in chosen_ids)} → {sum(after[i]['rounds_used'] for i in chosen_ids)}",
        ),
        Row(SECTION, f"dev-hard: the other {len(others)} cases finding less (round 1 or the loop)", str(len(lowered))),
        Row(
            SECTION,
            f"dev-hard ({len(cases)} cases): every gold after round 1, before → after attaching",
            f"{one_round[0]}/{len(cases)} → {one_round[1]}/{len(cases)}",
        ),
    ]
    raw = {"chosen": sorted(chosen_ids), "fixed": sorted(fixed), "lowered": lowered}
    return rows, raw
