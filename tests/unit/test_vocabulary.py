"""Names on the wire come from the proto descriptors, every name has a label, and progress
payloads carry exactly their phase's fields."""

from __future__ import annotations

import pytest

from gateway.labels import PROGRESS, RECORD_STATUS_LABELS, SEARCH_MODE_LABELS, STOP_REASON_LABELS, progress_line
from gateway.presenter import progress_payload, search_mode
from grpc_stubs.common.v1 import common_pb2
from kbcore.vocabulary import RECORD_STATUS, SEARCH_MODE, STOP_REASON


def test_wire_names_are_the_enum_value_names_without_their_prefix() -> None:
    assert STOP_REASON.name(common_pb2.STOP_REASON_NO_NEW_EVIDENCE) == "no_new_evidence"
    assert RECORD_STATUS.name(common_pb2.RECORD_STATUS_INTERRUPTED) == "interrupted"
    assert SEARCH_MODE.value("keyword") == common_pb2.SEARCH_MODE_KEYWORD
    assert STOP_REASON.name(common_pb2.STOP_REASON_UNSPECIFIED) == "", "unspecified has no name"
    assert STOP_REASON.name(999) == "", "a value from a newer build has no name here"
    with pytest.raises(KeyError):
        SEARCH_MODE.value("fuzzy")
    assert RECORD_STATUS.value("fuzzy", default=common_pb2.RECORD_STATUS_UNSPECIFIED) == 0
    assert len(STOP_REASON.names) == len(common_pb2.StopReason.keys()) - 1


def test_every_name_has_exactly_one_label() -> None:
    assert set(STOP_REASON_LABELS) == set(STOP_REASON.names)
    assert set(RECORD_STATUS_LABELS) == set(RECORD_STATUS.names)
    assert set(SEARCH_MODE_LABELS) == set(SEARCH_MODE.names)


def test_maxkb_search_mode_spellings_are_accepted() -> None:
    assert search_mode("embedding") == common_pb2.SEARCH_MODE_VECTOR
    assert search_mode("blend") == common_pb2.SEARCH_MODE_HYBRID
    assert search_mode("keyword") == common_pb2.SEARCH_MODE_KEYWORD


@pytest.mark.parametrize(
    ("progress", "payload", "line"),
    [
        (common_pb2.Progress(context=common_pb2.ContextLoading()), {"phase": "context"}, PROGRESS["context"]),
        (
            common_pb2.Progress(compacting=common_pb2.Compacting(rounds=4)),
            {"phase": "compacting", "rounds": 4},
            PROGRESS["compacting"],
        ),
        (
            common_pb2.Progress(retrieving=common_pb2.Retrieving(round=2, query="年假", queries=["年假"])),
            {"phase": "retrieving", "round": 2, "query": "年假", "queries": ["年假"]},
            "第 2 轮检索：年假",
        ),
        (
            common_pb2.Progress(
                assessed=common_pb2.Assessed(round=1, sufficient=False, missing="缺少年假天数", continues=True)
            ),
            {"phase": "assessed", "round": 1, "sufficient": False, "missing": "缺少年假天数", "continues": True},
            "继续查找资料：缺少年假天数",
        ),
        (
            common_pb2.Progress(assessed=common_pb2.Assessed(round=1, sufficient=True)),
            {"phase": "assessed", "round": 1, "sufficient": True, "missing": "", "continues": False},
            PROGRESS["assessed_sufficient"],
        ),
        (
            common_pb2.Progress(
                generating=common_pb2.Generating(rounds=3, stop_reason=common_pb2.STOP_REASON_MAX_ROUNDS)
            ),
            {"phase": "generating", "rounds": 3, "stop_reason": "max_rounds"},
            PROGRESS["generating"],
        ),
    ],
)
def test_each_phase_carries_its_own_fields_and_reads_as_the_seeds_wording(
    progress: common_pb2.Progress, payload: dict[str, object], line: str
) -> None:
    assert progress_payload(progress) == payload
    assert list(progress_payload(progress)) == list(payload), "key order is part of the wire format"
    assert progress_line(payload) == line


def test_an_unknown_phase_is_skipped_not_fatal() -> None:
    assert progress_line({"phase": "thinking"}) is None
    assert progress_line({"phase": "assessed", "sufficient": False}) == PROGRESS["assessed_unnamed_gap"]
    assert progress_line({"phase": "retrieving"}) == "第 ? 轮检索：?"
