"""The assessment JSON is read strictly: what cannot be read is never "sufficient"."""

from __future__ import annotations

import pytest

from kbcore.models.offline.question_parts import normalise_query
from services.retrieval.search.assessment import InvalidAssessment, parse_assessment


@pytest.mark.parametrize(
    "raw",
    ["not json", "[]", '{"missing": "x"}', '{"sufficient": "true"}', '{"sufficient": 1}', '{"sufficient": null}'],
)
def test_anything_without_a_boolean_sufficient_is_invalid(raw: str) -> None:
    with pytest.raises(InvalidAssessment):
        parse_assessment(raw)


def test_missing_is_clipped_and_queries_are_cleaned_and_capped() -> None:
    decision = parse_assessment(
        '{"sufficient": false, "missing": "' + "缺" * 500 + '", "queries": ["  甲  ", "", 3, "乙", "丙"]}'
    )
    assert decision.sufficient is False
    assert len(decision.missing) == 400
    assert decision.queries == ("甲", "乙")


def test_follow_up_queries_are_clipped_to_500_characters() -> None:
    decision = parse_assessment('{"sufficient": false, "queries": ["' + "问" * 800 + '"]}')
    assert len(decision.queries[0]) == 500


def test_a_fenced_json_object_is_accepted() -> None:
    assert parse_assessment('```json\n{"sufficient": true, "missing": ""}\n```').sufficient is True


def test_queries_normalise_case_whitespace_and_punctuation() -> None:
    assert normalise_query("  青禾乡 2026年，预算？ ") == normalise_query("青禾乡2026年预算")
    assert normalise_query("Budget, 2026!") == "budget2026"
    assert normalise_query("预算") != normalise_query("决算")
