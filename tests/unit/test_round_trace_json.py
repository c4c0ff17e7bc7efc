"""A retrieval round as the record and the trace show it: a skipped assessment appears only
when it happened, so records of rounds that were assessed read exactly as before."""

from __future__ import annotations

from gateway.presenter import round_json
from grpc_stubs.common.v1 import common_pb2


def test_an_assessed_round_has_no_skipped_field() -> None:
    shown = round_json(common_pb2.RoundTrace(round=1, queries=["年假"], sufficient=True))
    assert "assessment_skipped" not in shown


def test_a_round_that_added_nothing_says_its_assessment_was_skipped() -> None:
    trace = common_pb2.RoundTrace(round=2, queries=["年假 天数"], missing="缺少年假天数", assessment_skipped=True)
    shown = round_json(trace)
    assert shown["assessment_skipped"] is True and shown["missing"] == "缺少年假天数" and shown["sufficient"] is False
