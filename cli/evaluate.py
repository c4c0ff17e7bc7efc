"""``python -m cli eval APP_ID QUESTIONS.jsonl``: recall round by round on your own
knowledge base, one round against the whole loop (the route does the work; this reads the
file and prints the figures)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import httpx

from cli.client import CliError, request_data
from gateway.labels import STOP_REASON_LABELS


def read_cases(path: Path) -> list[dict[str, Any]]:
    """One JSON object per line (the shipped questions.jsonl shape); blank lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    cases = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CliError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(case, dict):
            raise CliError(f"{path}:{number}: expected a JSON object with 'turns'")
        cases.append(case)
    if not cases:
        raise CliError(f"{path} holds no questions")
    return cases


def report(data: dict[str, Any]) -> str:
    """The summary as a small table a person reads, then the questions that missed gold."""
    summary = data["summary"]
    total = summary["cases"]
    lines = [
        f"{total} questions, {summary['gold']} gold snippets, rewriting {'on' if data['rewrite'] else 'off'}",
        "",
        "after round | recall | questions with every gold snippet",
        "---|---|---",
    ]
    for row in summary["by_round"]:
        lines.append(f"{row['round']} | {row['recall']:.1%} | {row['all_gold']}/{total}")
    used = ", ".join(f"{rounds} round(s): {count}" for rounds, count in summary["rounds_used"].items())
    reasons = ", ".join(
        f"{STOP_REASON_LABELS.get(reason, reason or '无')} ({reason or '-'}): {count}"
        for reason, count in summary["stop_reasons"].items()
    )
    lines += ["", f"rounds used: {used}", f"stop reasons: {reasons}"]
    missed = [c for c in data["cases"] if not c["found_by_round"] or c["found_by_round"][-1] < c["gold"]]
    if missed:
        lines += ["", "missed gold:"]
        for case in missed:
            found = " → ".join(str(n) for n in case["found_by_round"]) or "0"
            lines.append(f"  {case['id'] or case['question'][:30]}: found {found} of {case['gold']}")
    return "\n".join(lines)


def run_eval(client: httpx.Client, args: argparse.Namespace) -> int:
    cases = read_cases(Path(args.questions))
    data = request_data(
        client, "POST", f"/api/application/{args.app_id}/eval", json={"cases": cases, "rewrite": not args.no_rewrite}
    )
    if not isinstance(data, dict):
        raise CliError("the gateway answered the evaluation without figures")
    print(json.dumps(data, ensure_ascii=False, indent=2) if args.json else report(data))
    return 0
