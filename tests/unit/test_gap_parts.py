"""The gap report's texts per record: the parts the visitor asked that the evidence did not
verify, never words an earlier question lent or the assessment's paraphrase of them."""

from __future__ import annotations

from grpc_stubs.common.v1 import common_pb2
from services.chat.admin.gaps import gap_parts


def result() -> common_pb2.RetrievalResult:
    message = common_pb2.RetrievalResult(
        sufficient=False,
        missing="缺少“青禾乡政府今年公车要花，在县城中心商圈路边停车怎么收费”的资料",
        stop_reason=common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY,
    )
    message.paragraphs.add(id="p1", content="停车收费")
    return message


def test_the_unverified_parts_as_asked_are_the_gaps() -> None:
    judged = result()
    judged.part_support.add(part="在县城中心商圈路边停车怎么收费？", verified=False)
    judged.part_support.add(part="图书馆几点开门？", verified=True)
    assert gap_parts(judged) == ["在县城中心商圈路边停车怎么收费？"]


def test_without_judged_parts_the_assessments_quoted_parts_are_the_gaps() -> None:
    assert gap_parts(result()) == ["青禾乡政府今年公车要花，在县城中心商圈路边停车怎么收费"]


def test_a_sufficient_record_has_no_gap() -> None:
    sufficient = result()
    sufficient.sufficient = True
    sufficient.part_support.add(part="图书馆几点开门？", verified=False)
    assert gap_parts(sufficient) == []


def test_a_part_with_words_a_rewrite_lent_it_is_counted_as_the_visitor_asked_it() -> None:
    judged = result()
    judged.part_support.add(part="押金 充电宝 租借：押金怎么退？", verified=False)
    assert gap_parts(judged, "押金怎么退？") == ["押金怎么退？"]
    own = result()
    own.part_support.add(part="押金怎么退？", verified=False)
    assert gap_parts(own, "押金怎么退？") == ["押金怎么退？"]
