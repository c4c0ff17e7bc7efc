"""A part's verdict is decided once, from ``verified`` and the quotes, and reaches the record's
JSON unchanged: set where the retrieval service builds the proto, filled in for a record saved
before it was kept, and shown with the quoted paragraphs in quote order, each once."""

from __future__ import annotations

import pytest

from gateway.labels import PART_VERDICT_LABELS
from gateway.presenter import parts_out
from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.models.base import PartSupport, PartVerdict, SupportQuote
from kbcore.vocabulary import PART_VERDICT
from services.chat.chat_messages import fill_verdicts
from services.retrieval.search.search_messages import part_support


def quote(paragraph_id: str) -> SupportQuote:
    return SupportQuote(paragraph_id, "规定", f"{paragraph_id} 的一句", 0.5)


@pytest.mark.parametrize(
    ("quotes", "verified", "verdict"),
    [
        ((quote("p1"),), True, PartVerdict.VERIFIED),
        ((quote("p1"),), False, PartVerdict.NEAREST),
        ((), False, PartVerdict.UNVERIFIABLE),
        ((), True, PartVerdict.UNVERIFIABLE),  # verified with nothing to show is not shown as verified
    ],
)
def test_the_verdict_follows_from_verified_and_the_quotes(
    quotes: tuple[SupportQuote, ...], verified: bool, verdict: PartVerdict
) -> None:
    assert PartSupport("年假有几天", quotes, verified).verdict is verdict


def test_the_verdicts_are_the_proto_enum_s_wire_names_and_each_has_a_label() -> None:
    assert set(PART_VERDICT.names) == {v.value for v in PartVerdict}
    assert set(PART_VERDICT_LABELS) == set(PART_VERDICT.names)


def test_the_retrieval_service_s_proto_carries_the_verdict() -> None:
    message = part_support(PartSupport("年终奖几个月", (quote("p2"),), False))
    assert message.verdict == common_pb2.PART_VERDICT_NEAREST
    assert message.verified is False and [q.paragraph_id for q in message.quotes] == ["p2"]


def test_a_record_saved_before_verdicts_were_kept_gets_them_and_a_kept_one_is_left_alone() -> None:
    result = common_pb2.RetrievalResult(
        part_support=[
            common_pb2.PartSupport(part="a", quotes=[common_pb2.SupportQuote(paragraph_id="p1")], verified=True),
            common_pb2.PartSupport(part="b", quotes=[common_pb2.SupportQuote(paragraph_id="p1")], verified=False),
            common_pb2.PartSupport(part="c", verified=False),
            # Kept as sent: the reader does not second-guess the service that decided it.
            common_pb2.PartSupport(part="d", verified=True, verdict=common_pb2.PART_VERDICT_NEAREST),
        ]
    )
    fill_verdicts(result)
    assert [PART_VERDICT.name(p.verdict) for p in result.part_support] == [
        "verified",
        "nearest",
        "unverifiable",
        "nearest",
    ]


def test_an_empty_retrieval_result_stays_unset() -> None:
    details = chat_pb.RecordDetails()
    fill_verdicts(details.retrieval)
    assert not details.HasField("retrieval"), "a record without retrieval must still read as one"


def details(offline: bool, *parts: common_pb2.PartSupport) -> chat_pb.RecordDetails:
    return chat_pb.RecordDetails(
        retrieval=common_pb2.RetrievalResult(part_support=parts),
        chat=chat_pb.ChatStep(model="m", offline_model=offline),
    )


def test_parts_out_names_the_verdict_and_the_quoted_paragraphs_in_quote_order_once_each() -> None:
    quoted = [common_pb2.SupportQuote(paragraph_id=i) for i in ("p3", "p1", "p3", "p2", "p1")]
    verified = common_pb2.PartSupport(
        part="探视时间", quotes=quoted, verified=True, verdict=common_pb2.PART_VERDICT_VERIFIED
    )
    lost = common_pb2.PartSupport(part="售价", verdict=common_pb2.PART_VERDICT_UNVERIFIABLE)
    assert [part.wire() for part in parts_out(details(True, verified, lost))] == [
        {"part": "探视时间", "verdict": "verified", "paragraph_ids": ["p3", "p1", "p2"]},
        {"part": "售价", "verdict": "unverifiable", "paragraph_ids": []},
    ]
    assert parts_out(details(False, verified)) == [], "only the offline model judges parts"
    assert parts_out(chat_pb.RecordDetails(chat=chat_pb.ChatStep(offline_model=True))) == []
