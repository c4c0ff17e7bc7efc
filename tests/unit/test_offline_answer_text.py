"""The offline answer's layout as a reader sees it: the notice once, one block per part, each quote
on its own line with its document, a table row named by its header, the nearest evidence kept
short, and the parts that stay unverified named where ``unverified_parts`` finds them."""

from __future__ import annotations

from gateway.labels import labels_json
from kbcore.answer_notice import FORMER_LABELS, OFFLINE_LABEL
from kbcore.models.base import EvidenceParagraph, GenerationRequest, PartSupport, SupportQuote
from kbcore.models.offline.answer_text import (
    answer_pieces,
    summary_lines,
    unverified_parts,
    without_label,
)
from kbcore.models.offline.evidence import sentences
from kbcore.models.offline.model import compose_answer
from kbcore.models.offline.table_rows import table_segments

ALLOWANCE = "青禾乡高龄津贴发放办法"
GUIDE = "青禾乡便民服务指南"
AMOUNT = "90周岁至99周岁的，每人每月150元。"
MONTHLY = "津贴按月发放。"
TABLE = (
    "下列事项可在便民服务中心办理。\n"
    "| 事项 | 所需材料 | 办理时限 |\n"
    "| --- | --- | --- |\n"
    "| 残疾人证申领 | 身份证、户口簿、近期免冠照片 | 20个工作日 |\n"
    "| 高龄津贴申领 | 身份证、户口簿 | |"
)


def quote(sentence: str, document: str = ALLOWANCE, paragraph: str = "p1") -> SupportQuote:
    return SupportQuote(paragraph, document, sentence, 1.0)


def text(supports: list[PartSupport], question: str = "问题？") -> str:
    return "".join(answer_pieces(question, True, supports))


def quote_lines(answer: str) -> list[str]:
    return [line for line in answer.splitlines() if line.startswith("> ")]


def test_each_quote_is_on_its_own_line_with_its_document_after_it() -> None:
    answer = text([PartSupport("青禾乡90至99周岁的老人每月能领多少高龄津贴？", (quote(AMOUNT), quote(MONTHLY)))])
    assert quote_lines(answer) == [f"> {AMOUNT} ——《{ALLOWANCE}》", f"> {MONTHLY} ——《{ALLOWANCE}》"]


def test_a_document_name_in_title_marks_is_not_marked_twice() -> None:
    answer = text([PartSupport("多少？", (quote(AMOUNT, document=f"《{ALLOWANCE}》"),))])
    assert quote_lines(answer) == [f"> {AMOUNT} ——《{ALLOWANCE}》"]


def test_the_notice_opens_the_answer_once_and_each_part_has_its_block() -> None:
    supports = [
        PartSupport("每月能领多少？", (quote(AMOUNT),)),
        PartSupport("什么时候发？", (quote(MONTHLY),)),
    ]
    answer = text(supports)
    assert answer.startswith(OFFLINE_LABEL + "\n\n") and answer.count(OFFLINE_LABEL) == 1
    blocks = answer.split("\n\n")[1:]
    assert blocks == [
        f"1. 每月能领多少？\n> {AMOUNT} ——《{ALLOWANCE}》",
        f"2. 什么时候发？\n> {MONTHLY} ——《{ALLOWANCE}》",
    ]
    assert unverified_parts(answer) == ""


def test_a_single_part_has_no_header() -> None:
    answer = text([PartSupport("每月能领多少？", (quote(AMOUNT),))])
    assert answer == f"{OFFLINE_LABEL}\n\n> {AMOUNT} ——《{ALLOWANCE}》"


def test_nearest_evidence_says_so_in_one_line_and_shows_at_most_two_quotes() -> None:
    nearest = tuple(quote(f"第{i}条 无关的规定。", paragraph=f"p{i}") for i in range(1, 5))
    supports = [
        PartSupport("每月能领多少？", (quote(AMOUNT),)),
        PartSupport("申请要带什么材料？", nearest, verified=False),
    ]
    answer = text(supports)
    second = answer.split("\n\n")[2].splitlines()
    assert second[0] == "2. 申请要带什么材料？"
    assert second[1].startswith("未能确认资料回答了") and "最接近" in second[1], "not said to be missing"
    assert second[2:] == [f"> {q.sentence} ——《{ALLOWANCE}》" for q in nearest[:2]]
    assert "申请要带什么材料" in unverified_parts(answer) and "每月能领多少" not in unverified_parts(answer)


def test_an_unverifiable_part_is_one_line_and_named() -> None:
    supports = [PartSupport("每月能领多少？", (quote(AMOUNT),)), PartSupport("停车费是多少？", (), verified=False)]
    answer = text(supports)
    assert (
        answer.split("\n\n")[2]
        == "2. 停车费是多少？\n无法根据资料核实这一问：检索到的资料中没有相关内容，本回答不作推测。"
    )
    assert "停车费是多少" in unverified_parts(answer)
    alone = text([PartSupport("停车费是多少？", (), verified=False)])
    assert alone.split("\n\n")[1].startswith("无法根据资料核实“停车费是多少”")
    assert "停车费是多少" in unverified_parts(alone)


def test_a_sentence_quoted_for_an_earlier_part_is_pointed_to() -> None:
    supports = [PartSupport("每月能领多少？", (quote(AMOUNT),)), PartSupport("领多少钱？", (quote(AMOUNT),))]
    answer = text(supports)
    assert answer.count(AMOUNT) == 1
    assert answer.split("\n\n")[2] == f"2. 领多少钱？\n见第1部分所引资料——《{ALLOWANCE}》"


def test_no_evidence_says_so_after_the_notice() -> None:
    answer = "".join(answer_pieces("白石镇下辖多少个行政村？", False, []))
    assert answer == f"{OFFLINE_LABEL}\n\n未检索到与问题相关的资料，无法根据知识库回答：白石镇下辖多少个行政村？"


def test_a_table_row_is_quoted_as_named_fields_with_its_values_verbatim() -> None:
    assert sentences(TABLE) == [
        "下列事项可在便民服务中心办理。",
        "事项：残疾人证申领；所需材料：身份证、户口簿、近期免冠照片；办理时限：20个工作日",
        "事项：高龄津贴申领；所需材料：身份证、户口簿",  # an empty cell says nothing
    ]
    question = "青禾乡残疾人证申领需要什么材料？"
    evidence = [EvidenceParagraph("t1", GUIDE, "办事材料", TABLE)]
    answer = "".join(compose_answer(GenerationRequest([], question, question, evidence, True, "", "")))
    assert quote_lines(answer)[0] == (
        f"> 事项：残疾人证申领；所需材料：身份证、户口簿、近期免冠照片；办理时限：20个工作日 ——《{GUIDE}》"
    )
    assert "|" not in answer


def test_table_rows_without_their_header_and_escaped_pipes() -> None:
    assert table_segments("| 换领 \\| 补办 | 旧证 |\n| a |  |") == [("换领 | 补办；旧证", True), ("a", True)]
    assert table_segments("a | b 不是表格。") == [("a | b 不是表格。", False)]


def test_summary_lines_and_the_log_drop_the_notice_but_keep_what_was_said() -> None:
    supports = [PartSupport("每月能领多少？", (quote(AMOUNT),)), PartSupport("停车费是多少？", (), verified=False)]
    answer = text(supports)
    assert summary_lines(answer) == [
        f"{AMOUNT} ——《{ALLOWANCE}》",
        "无法根据资料核实“停车费是多少”：检索到的资料中没有相关内容，本回答不作推测。",
    ]
    assert without_label(answer).startswith("1. 每月能领多少？")
    assert without_label(f"{FORMER_LABELS[0]}\n\n{AMOUNT}") == AMOUNT
    assert without_label(AMOUNT) == AMOUNT


def test_the_log_pages_are_told_every_notice_to_leave_out() -> None:
    notices = labels_json()["log"]["answer_notices"]
    answer = text([PartSupport("每月能领多少？", (quote(AMOUNT),))])
    assert any(answer.startswith(n) for n in notices)
    assert all(n in notices for n in FORMER_LABELS)
