"""The retrieval service's ``Evaluate``: the loop run in-process for every case, scored round by
round, cases in request order; what it cannot score is refused with the case named."""

from __future__ import annotations

import grpc

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from tests.grpc_status import status_of
from tools.seed_demo import DEMO_DATASET_ID

UNKNOWN = "00000000-0000-0000-0000-000000000000"
ICU = "云岭县人民医院ICU每天的探视时间是几点到几点？"


def case(case_id: str, question: str, *gold: str) -> pb.EvalCase:
    return pb.EvalCase(
        id=case_id, turns=[pb.EvalTurn(question=question, gold=[pb.GoldSnippet(must_contain=g) for g in gold])]
    )


async def test_every_case_is_scored_in_request_order(retrieval) -> None:
    cases = [case("icu", ICU, "16:00"), case("nowhere", "年假有几天？", "不存在的句子甲乙丙")]
    reply = await retrieval.search.Evaluate(pb.EvaluateRequest(dataset_ids=[DEMO_DATASET_ID], cases=cases))
    assert [c.id for c in reply.cases] == ["icu", "nowhere"]
    icu, nowhere = reply.cases
    assert icu.gold_total == 1 and icu.found_by_round[-1] == 1 and icu.rounds_used == len(icu.found_by_round)
    assert list(nowhere.found_by_round) == [0] * nowhere.rounds_used
    assert icu.stop_reason != common_pb2.STOP_REASON_UNSPECIFIED
    summary = reply.summary
    assert (summary.cases, summary.gold_total) == (2, 2)
    assert [r.round for r in summary.by_round] == list(range(1, max(icu.rounds_used, nowhere.rounds_used) + 1))
    assert summary.by_round[-1].recall == 0.5 and summary.by_round[-1].all_gold == 1
    assert sum(s.cases for s in summary.stop_reasons) == sum(u.cases for u in summary.rounds_used) == 2


async def test_what_cannot_be_scored_is_refused(retrieval) -> None:
    def evaluate(cases: list[pb.EvalCase], datasets: list[str] | None = None) -> object:
        return retrieval.search.Evaluate(
            pb.EvaluateRequest(dataset_ids=[DEMO_DATASET_ID] if datasets is None else datasets, cases=cases)
        )

    code, message = await status_of(evaluate([case("q7", "年假有几天？")]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert message == "case q7: its last turn has no gold snippets to look for"
    code, message = await status_of(evaluate([]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "at least one" in message
    code, message = await status_of(evaluate([case("", "年" * 9000, "年假")]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and message.startswith("case 1:") and "4000" in message
    code, message = await status_of(evaluate([case("a", "年假", "年假")], [UNKNOWN]))
    assert code == grpc.StatusCode.NOT_FOUND and UNKNOWN in message
    code, message = await status_of(evaluate([case("a", "年假", "年假")], []))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "dataset" in message
