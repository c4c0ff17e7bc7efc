"""Strict reading of the sufficiency assessment a model returns as JSON.

Anything but a JSON object with a boolean ``sufficient`` is an error: a reply we cannot
read must never be taken for "the evidence is sufficient".
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MAX_MISSING_CHARS = 400
MAX_QUERY_CHARS = 500
MAX_QUERIES = 2


class InvalidAssessment(ValueError):
    pass


@dataclass(frozen=True)
class Assessment:
    sufficient: bool
    missing: str
    queries: tuple[str, ...]


def _strip_fence(text: str) -> str:
    """Models in JSON mode sometimes still wrap the object in a Markdown fence."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip()


def parse_assessment(raw: str) -> Assessment:
    try:
        decision = json.loads(_strip_fence(raw))
    except json.JSONDecodeError as exc:
        raise InvalidAssessment(f"the assessment is not JSON: {exc.msg}") from exc
    if not isinstance(decision, dict):
        raise InvalidAssessment("the assessment is not a JSON object")
    sufficient = decision.get("sufficient")
    if not isinstance(sufficient, bool):
        raise InvalidAssessment("the assessment has no boolean 'sufficient'")
    missing = decision.get("missing")
    missing_text = (
        "" if missing is None else (missing if isinstance(missing, str) else json.dumps(missing, ensure_ascii=False))
    )
    queries: list[str] = []
    candidates = decision.get("queries")
    if isinstance(candidates, list):
        for candidate in candidates:
            if isinstance(candidate, str) and candidate.strip() and len(queries) < MAX_QUERIES:
                queries.append(candidate.strip()[:MAX_QUERY_CHARS])
    return Assessment(sufficient, missing_text[:MAX_MISSING_CHARS], tuple(queries))
