"""A retrieval round as the record and the trace show it: a skipped assessment appears only
when it happened, so records of rounds that were assessed read exactly as before."""

from __future__ import annotations

from gateway.presenter import round_out
from grpc_stubs.common.v1 import common_pb2


def test_an_assessed_round_has_no_skipped_field() -> None:
    shown = round_out(common_pb2.RoundTrace(round=1, queries=["年假"], sufficient=True)).wire()
    assert "assessment_skipped" not in shown and "assessed_by" not in shown


def test_a_round_the_evidence_judge_decided_says_so() -> None:
    trace = common_pb2.RoundTrace(round=1, queries=["年假"], sufficient=True, assessed_by="evidence_judge")
    assert round_out(trace).wire()["assessed_by"] == "evidence_judge"


def test_a_round_that_added_nothing_says_its_assessment_was_skipped() -> None:
    trace = common_pb2.RoundTrace(round=2, queries=["年假 天数"], missing="缺少年假天数", assessment_skipped=True)
    shown = round_out(trace).wire()
    assert shown["assessment_skipped"] is True and shown["missing"] == "缺少年假天数" and shown["sufficient"] is False


def test_a_records_thinking_repeats_the_streams_lines_and_no_assessment_of_a_skipped_round() -> None:
    from gateway.presenter import record_out
    from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb

    record = chat_pb.ChatRecord(id="1", chat_id="c")
    rounds = record.details.retrieval.rounds
    rounds.add(round=1, queries=["年假"], missing="缺少年假天数")
    rounds.add(round=2, queries=["年假 天数"], missing="缺少年假天数", assessment_skipped=True)
    record.details.chat.reasoning = "模型的思考"
    [[card]] = record_out(record).answer_text_list
    lines = card.reasoning_content.splitlines()
    assert lines == ["第 1 轮检索：年假", "继续查找资料：缺少年假天数", "第 2 轮检索：年假 天数", "模型的思考"]
