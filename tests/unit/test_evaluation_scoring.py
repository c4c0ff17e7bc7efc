"""Recall scoring round by round (the retrieval service's ``Evaluate``) and its JSON (the
gateway's presenter): which round found each gold snippet, what a loop that stopped early
keeps, the summary's counts and order, and the route's key order and rounding."""

from __future__ import annotations

import pytest

import services.retrieval.search.evaluation as evaluation
from gateway.presenter import evaluation_out
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.errors import InvalidRequest
from services.retrieval.search.loop import Evidence, LoopResult, RoundTrace
from services.retrieval.store.base import Hit


def case(case_id: str, *turns: tuple[str, list[str]], kind: str = "compound") -> pb.EvalCase:
    return pb.EvalCase(
        id=case_id,
        kind=kind,
        turns=[
            pb.EvalTurn(
                question=question,
                gold=[pb.GoldSnippet(must_contain=g) for g in gold],
                answer_facts=[f"{question}的答案"],
            )
            for question, gold in turns
        ],
    )


def outcome(found: dict[int, list[str]], rounds: int, stop: common_pb2.StopReason) -> LoopResult:
    """A loop result whose evidence holds ``found[r]`` texts first found in round ``r``."""
    evidence = [
        Evidence(Hit(f"p{r}-{i}", "d", "doc", "文档", "", text, i, 0.9), r)
        for r, texts in found.items()
        for i, text in enumerate(texts)
    ]
    traces = [RoundTrace(r, [f"q{r}"], [], len(evidence)) for r in range(1, rounds + 1)]
    return LoopResult("改写后的问题", evidence, traces, stop, sufficient=False, missing="", run_time=0.1)


def test_each_round_counts_the_gold_found_so_far_and_the_summary_keeps_early_stops() -> None:
    two_rounds = case("a", ("问题甲", ["预算120万元", "15日内"]))
    one_round = case("b", ("问题乙", ["探视16:00"]))
    never = case("c", ("问题丙", ["不存在的句子"]))
    scores = [
        evaluation.score(
            two_rounds,
            ["预算120万元", "15日内"],
            outcome({1: ["项目支出预算120万元。"], 2: ["应当在15日内提交。"]}, 2, common_pb2.STOP_REASON_SUFFICIENT),
        ),
        evaluation.score(
            one_round, ["探视16:00"], outcome({1: ["ICU探视16:00至16:30"]}, 1, common_pb2.STOP_REASON_SUFFICIENT)
        ),
        evaluation.score(never, ["不存在的句子"], outcome({}, 3, common_pb2.STOP_REASON_MAX_ROUNDS)),
    ]
    assert [list(s.found_by_round) for s in scores] == [[1, 2], [1], [0, 0, 0]]
    assert [s.rounds_used for s in scores] == [2, 1, 3]
    summary = evaluation.summarize(scores)
    assert (summary.cases, summary.gold_total) == (3, 4)
    # After round 2 the one-round case keeps its last count (1 of 1).
    assert [(r.round, r.all_gold) for r in summary.by_round] == [(1, 1), (2, 2), (3, 2)]
    assert [r.recall for r in summary.by_round] == [2 / 4, 3 / 4, 3 / 4]
    assert [(u.rounds, u.cases) for u in summary.rounds_used] == [(1, 1), (2, 1), (3, 1)]
    assert [(s.stop_reason, s.cases) for s in summary.stop_reasons] == [
        (common_pb2.STOP_REASON_SUFFICIENT, 2),
        (common_pb2.STOP_REASON_MAX_ROUNDS, 1),
    ]


def test_the_route_json_keeps_its_keys_order_and_rounding() -> None:
    scores = [
        evaluation.score(
            case("x", ("问题", ["甲", "乙", "丙"])),
            ["甲", "乙", "丙"],
            outcome({1: ["甲"]}, 1, common_pb2.STOP_REASON_NO_NEW_EVIDENCE),
        ),
        evaluation.score(
            case("y", ("问题", ["丁"])), ["丁"], outcome({2: ["丁"]}, 2, common_pb2.STOP_REASON_SUFFICIENT)
        ),
    ]
    data = evaluation_out(False, pb.EvaluateResponse(summary=evaluation.summarize(scores), cases=scores)).wire()
    assert list(data) == ["rewrite", "summary", "cases"] and data["rewrite"] is False
    assert data["summary"] == {
        "cases": 2,
        "gold": 4,
        "by_round": [{"round": 1, "recall": 0.25, "all_gold": 0}, {"round": 2, "recall": 0.5, "all_gold": 1}],
        "rounds_used": {"1": 1, "2": 1},
        # equal counts: in the order the reasons first occur
        "stop_reasons": {"no_new_evidence": 1, "sufficient": 1},
    }
    assert list(data["summary"]) == ["cases", "gold", "by_round", "rounds_used", "stop_reasons"]
    assert data["cases"][0] == {
        "id": "x",
        "kind": "compound",
        "question": "问题",
        "problem_text": "改写后的问题",
        "gold": 3,
        "found_by_round": [1],
        "rounds_used": 1,
        "stop_reason": "no_new_evidence",
    }
    thirds = evaluation.summarize([scores[0]])
    assert evaluation_out(True, pb.EvaluateResponse(summary=thirds)).summary.by_round[0].recall == 0.3333


def test_history_is_the_earlier_turns_with_their_facts_as_answers_unless_asked_without() -> None:
    follow_up = case("f", ("白石镇下辖多少个行政村？", []), ("镇政府在哪？", ["镇政府位于"]), kind="followup")
    request = pb.EvaluateRequest(cases=[follow_up])
    (asked,) = evaluation.questions(request)
    assert asked.question == "镇政府在哪？" and asked.gold == ["镇政府位于"]
    assert [(m.role, m.content) for m in asked.history] == [
        ("user", "白石镇下辖多少个行政村？"),
        ("assistant", "白石镇下辖多少个行政村？的答案"),
    ]
    request.without_history = True
    assert evaluation.questions(request)[0].history == []


def test_cases_that_cannot_be_scored_are_named() -> None:
    no_gold = case("q7", ("年假有几天？", []))
    fine = case("", ("年假有几天？", ["年假"]))
    blank = case("", ("   ", ["年假"]))
    with pytest.raises(InvalidRequest) as refused:
        evaluation.questions(pb.EvaluateRequest(cases=[fine, no_gold, blank]))
    assert str(refused.value) == (
        "case q7: its last turn has no gold snippets to look for; case 3: its last question is empty"
    )
    with pytest.raises(InvalidRequest, match="at least one"):
        evaluation.questions(pb.EvaluateRequest())
    with pytest.raises(InvalidRequest, match="no turns"):
        evaluation.questions(pb.EvaluateRequest(cases=[pb.EvalCase(id="e")]))
    empty_snippet = pb.EvalCase(turns=[pb.EvalTurn(question="年假", gold=[pb.GoldSnippet()])])
    with pytest.raises(InvalidRequest, match="gold snippet is empty"):
        evaluation.questions(pb.EvaluateRequest(cases=[empty_snippet]))
