"""``python -m cli eval APP_ID QUESTIONS.jsonl``: recall round by round on your own
knowledge base, one round against the whole loop (the route does the work; this reads the
file and prints the figures)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import httpx

from cli.client import request_data
from cli.failure import CliError, cannot_read
from cli.words import CliWords

CASE_FIELD = "turns"  # what each line's object holds its questions in


def read_cases(path: Path) -> list[dict[str, Any]]:
    """One JSON object per line (the shipped questions.jsonl shape); blank lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise cannot_read(path, exc) from exc
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CliError("evaluate.not_json", path=path, line=number, column=exc.colno) from exc
        if not isinstance(case, dict):
            raise CliError("evaluate.not_an_object", path=path, line=number, field=CASE_FIELD)
        cases.append(case)
    if not cases:
        raise CliError("evaluate.no_questions", path=path)
    return cases


def usage_lines(summary: dict[str, Any], words: CliWords) -> list[str]:
    """How many rounds the questions took, and why the loop stopped, each with its count."""
    used = words.listed(
        words(
            "evaluate.rounds_item",
            rounds=words.counted("evaluate.rounds", int(rounds)),
            questions=words.counted("evaluate.questions", count),
        )
        for rounds, count in summary["rounds_used"].items()
    )
    reasons = words.listed(
        words(
            "evaluate.stop_reason_item",
            reason=words.stop_reason(reason),
            questions=words.counted("evaluate.questions", count),
        )
        for reason, count in summary["stop_reasons"].items()
    )
    return [words("evaluate.rounds_used", items=used), words("evaluate.stop_reasons", items=reasons)]


def missed_lines(cases: list[dict[str, Any]], words: CliWords) -> list[str]:
    """The questions whose gold the last round still lacked, with what each round had found."""
    missed = [c for c in cases if not c["found_by_round"] or c["found_by_round"][-1] < c["gold"]]
    if not missed:
        return []
    lines = ["", words("evaluate.missed")]
    for case in missed:
        found = " → ".join(str(n) for n in case["found_by_round"]) or "0"
        lines.append(
            words("evaluate.missed_case", case=case["id"] or case["question"][:30], found=found, gold=case["gold"])
        )
    return lines


def report(data: dict[str, Any], words: CliWords) -> str:
    """The summary as a small table a person reads, then the questions that missed gold."""
    summary = data["summary"]
    total = summary["cases"]
    heading = words(
        "evaluate.heading",
        questions=words.counted("evaluate.questions", total),
        gold=words.counted("evaluate.gold", summary["gold"]),
        rewrite=words("common.on" if data["rewrite"] else "common.off"),
    )
    lines = [heading, "", words("evaluate.columns"), "---|---|---"]
    for row in summary["by_round"]:
        lines.append(f"{row['round']} | {row['recall']:.1%} | {row['all_gold']}/{total}")
    lines += ["", *usage_lines(summary, words), *missed_lines(data["cases"], words)]
    return "\n".join(lines)


def run_eval(client: httpx.Client, args: argparse.Namespace, words: CliWords) -> int:
    cases = read_cases(Path(args.questions))
    data = request_data(
        client, "POST", f"/api/application/{args.app_id}/eval", json={"cases": cases, "rewrite": not args.no_rewrite}
    )
    if not isinstance(data, dict):
        raise CliError("evaluate.no_figures")
    print(json.dumps(data, ensure_ascii=False, indent=2) if args.json else report(data, words))
    return 0
