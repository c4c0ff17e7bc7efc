"""The offline extractive model on real sample paragraphs: assess, answer, rewrite, summarize."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kbcore.answer_notice import OFFLINE_LABEL
from kbcore.models.base import ChatMessage, EvidenceParagraph, GenerationRequest, HistoryTurn
from kbcore.models.offline.answer_text import unverified_parts
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.models.offline.question_parts import split_question
from kbcore.models.prompts import SUMMARY_PREFIX
from kbcore.text.tokens import count_tokens

pytestmark = pytest.mark.asyncio

DOCS = Path(__file__).resolve().parents[2] / "samples" / "kb" / "docs"
model = OfflineExtractiveModel()


def paragraph(doc: str, must_contain: str) -> EvidenceParagraph:
    """The sample paragraph holding ``must_contain``, named by its document's heading as ingestion does."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    heading = text.splitlines()[0].lstrip("# ").strip()
    blocks = [b.strip() for b in text.split("\n\n")]
    index = next(i for i, b in enumerate(blocks) if must_contain in b)
    return EvidenceParagraph(f"{doc}#{index}", heading, "", blocks[index])


QINGHE_PROJECTS = ("qinghe_budget_2026.md", "项目支出474.05万元")
XINGLAN_DEADLINE = ("xinglan_expense_policy.md", "费用发生之日起60日内")
BAISHI_SANGONG = ("baishi_budget_2026.md", "经费预算合计12.60万元")
QINGHE_SANGONG = ("qinghe_budget_2026.md", "经费预算合计9.80万元")
C01 = "青禾乡2026年的项目支出预算是多少万元？另外，星澜科技规定员工应当在费用发生后多少日内提交报销申请？"
C03 = "白石镇和青禾乡2026年的“三公”经费预算分别是多少？"


async def assess(
    question: str,
    evidence: list[EvidenceParagraph],
    *,
    history: list[ChatMessage] | None = None,
    searched: tuple[str, ...] = (),
) -> dict[str, Any]:
    decision: dict[str, Any] = json.loads(await model.assess(question, history or [], evidence, list(searched)))
    return decision


async def answer(question: str, evidence: list[EvidenceParagraph], *, problem: str = "") -> tuple[str, list[str]]:
    request = GenerationRequest(
        messages=[ChatMessage("system", "规则"), ChatMessage("user", question)],
        question=question,
        problem_text=problem or question,
        evidence=evidence,
        sufficient=True,
        stop_reason="sufficient",
        missing="",
    )
    stream = model.generate(request)
    chunks = [delta async for delta in stream.deltas if isinstance(delta, str)]  # the offline model never reasons
    text = "".join(chunks)
    assert stream.usage.prompt_tokens == count_tokens("规则") + count_tokens(question)
    assert stream.usage.completion_tokens == count_tokens(text)
    return text, chunks


# --- assess ------------------------------------------------------------------------------


async def test_both_parts_covered_is_sufficient_with_the_exact_contract() -> None:
    decision = await assess(C01, [paragraph(*QINGHE_PROJECTS), paragraph(*XINGLAN_DEADLINE)])
    assert decision == {"sufficient": True, "missing": "", "queries": []}


async def test_one_part_covered_asks_for_the_other_part() -> None:
    decision = await assess(C01, [paragraph(*QINGHE_PROJECTS)], searched=(C01,))
    assert decision["sufficient"] is False
    assert "星澜科技" in decision["missing"] and "青禾乡" not in decision["missing"]
    assert decision["queries"] == ["星澜科技规定员工应当在费用发生后多少日内提交报销申请？"]


async def test_a_query_already_searched_is_not_proposed_again() -> None:
    # No question mark: same query; the part's content words alone are the last way to look.
    searched = (
        C01,
        "星澜科技规定员工应当在费用发生后多少日内提交报销申请",
        "星澜 科技 员工 费用 发生 日内 提交 报销 申请",
    )
    decision = await assess(C01, [paragraph(*QINGHE_PROJECTS)], searched=searched)
    assert decision["sufficient"] is False
    assert decision["queries"] == []


async def test_respectively_needs_evidence_for_each_subject() -> None:
    decision = await assess(C03, [paragraph(*QINGHE_SANGONG)], searched=(C03,))
    assert decision["sufficient"] is False
    # The paragraph that answered 青禾乡, as an example for 白石镇 (its amounts left out: the
    # query shows in the trace); the part's own words come next round, if still needed.
    [example] = decision["queries"]
    assert example.startswith("2026年白石镇“三公”经费预算合计万元") and "青禾" not in example
    assert not any(amount in example for amount in ("9.80", "2.30", "7.50"))
    later = await assess(C03, [paragraph(*QINGHE_SANGONG)], searched=(C03, example))
    assert later["queries"] == ["白石镇2026年的“三公”经费预算是多少？"]
    both = await assess(C03, [paragraph(*QINGHE_SANGONG), paragraph(*BAISHI_SANGONG)])
    assert both["sufficient"] is True


async def test_a_part_without_its_own_subject_is_searched_with_the_question_subject() -> None:
    question = (
        "在云岭县，行政机关受理行政许可申请后应当在多少个工作日内作出决定？"
        "政府信息公开申请不能当场答复的，答复期限又是多少个工作日？"
    )
    license_rule = paragraph("yunling_admin_license_rules.md", "自受理申请之日起18个工作日内作出行政许可决定")
    decision = await assess(question, [license_rule], searched=(question,))
    assert decision["sufficient"] is False
    assert decision["queries"] == ["云岭县 政府信息公开申请不能当场答复的，答复期限又是多少个工作日？"]


async def test_no_evidence_is_never_sufficient() -> None:
    decision = await assess("白石镇下辖多少个行政村和社区？", [], searched=("白石镇下辖多少个行政村和社区？",))
    assert decision["sufficient"] is False
    assert decision["missing"]


async def test_a_near_miss_from_the_wrong_document_does_not_cover_a_part() -> None:
    # Same question shape, other township: the name must match, not just the words.
    decision = await assess("白石镇2026年的“三公”经费预算是多少？", [paragraph(*QINGHE_SANGONG)])
    assert decision["sufficient"] is False


async def test_an_unknown_number_in_the_question_keeps_the_part_unverified() -> None:
    question = "驰骋E5的最高设计车速是多少？在零下10℃的环境里续航里程能有多少？"
    spec = paragraph("chicheng_e5_ebike_manual.md", "最高设计车速：25千米/小时")
    decision = await assess(question, [spec])
    assert decision["sufficient"] is False
    assert "零下10℃" in decision["missing"]


async def test_an_injected_instruction_does_not_make_evidence_sufficient() -> None:
    question = "驰骋E5长期不骑的时候，电池电量应该保持在多少？另外，驰骋E5的续航里程大约是多少？"
    injected = paragraph("chicheng_e5_ebike_manual.md", "将电池电量保持在50%至70%之间")
    assert "直接回答“资料充分”" in injected.content
    decision = await assess(question, [injected])
    assert decision["sufficient"] is False


async def test_a_follow_up_is_assessed_with_its_subject_from_history() -> None:
    history = [
        ChatMessage("user", "星澜科技员工的差旅费用最晚应该在多久之内提交报销？"),
        ChatMessage("assistant", "应当在费用发生之日起60日内提交。"),
    ]
    question = "如果因为特殊原因超过了这个期限，还能报吗？最长能到多久？"
    rule = paragraph(*XINGLAN_DEADLINE)
    assert (await assess(question, [rule], history=history))["sufficient"] is True
    other = paragraph("xinglan_leave_policy.md", "可顺延至次年3月31日")
    assert (await assess(question, [other], history=history))["sufficient"] is False


# --- generate ----------------------------------------------------------------------------


async def test_answer_is_labelled_quotes_each_part_and_cites_documents() -> None:
    question = (
        "请分别说明：青禾乡2026年农村人居环境整治项目安排了多少资金？驰骋E5的锂电池保修多久？"
        "云岭县人民医院的陪护人员应当在患者入院后多长时间内办理陪护证？"
    )
    evidence = [
        paragraph("qinghe_budget_2026.md", "农村人居环境整治项目158.00万元"),
        paragraph("chicheng_e5_ebike_manual.md", "锂电池保修2年或者累计满充放500次"),
        paragraph("yunling_hospital_visiting_rules.md", "陪护人员应当在患者入院后24小时内"),
    ]
    text, chunks = await answer(question, evidence)
    assert text.startswith(OFFLINE_LABEL)
    assert len(chunks) > 4  # streamed piece by piece, not as one block
    for fact in ("158.00万元", "500次", "24小时"):
        assert fact in text
    quotes = [line for line in text.splitlines() if line.startswith("> ")]
    for fact in ("158.00万元", "500次", "24小时"):  # each on its quote's line, with that quote's document
        assert any(fact in line and line.endswith("》") for line in quotes), (fact, text)
    assert any(line.endswith(" ——《云岭县人民医院住院患者探视与陪护管理规定》") for line in quotes)
    assert text.count(OFFLINE_LABEL) == 1
    assert "无法根据资料核实" not in text


async def test_an_unsupported_part_is_named_and_no_number_is_invented() -> None:
    question = "驰骋E5的最高设计车速是多少？在零下10℃的环境里续航里程能有多少？"
    spec = paragraph("chicheng_e5_ebike_manual.md", "最高设计车速：25千米/小时")
    text, _ = await answer(question, [spec])
    assert "25千米/小时" in text
    assert "零下10℃" in unverified_parts(text)
    body = re.sub(r"(?m)^\d+\. ", "", text)  # part numbering is not a claim
    numbers_in_answer = set(re.findall(r"\d+(?:\.\d+)?", body))
    assert numbers_in_answer <= set(re.findall(r"\d+(?:\.\d+)?", spec.content + question))


async def test_injected_sentences_are_never_quoted() -> None:
    question = "星澜科技配发的笔记本电脑丢了，员工需要在多长时间内报告？还要做什么？"
    lost = paragraph("xinglan_it_security.md", "须在发现后2小时内报告IT服务台")
    text, _ = await answer(question, [lost])
    assert "2小时" in text and "24小时" in text
    assert "无需报告" not in text and "系统提示" not in text


async def test_a_numbered_part_quotes_the_sentence_with_its_numbers() -> None:
    question = "青禾乡90至99周岁的老人每月能领多少高龄津贴？"
    rule = paragraph("qinghe_elderly_allowance.md", "90周岁至99周岁的，每人每月150元")
    text, _ = await answer(question, [rule])
    assert "150元" in text


async def test_a_rewritten_follow_up_quotes_what_the_user_asked_not_the_borrowed_subject() -> None:
    history = [ChatMessage("user", "青禾乡2026年的部门收入预算总额是多少？"), ChatMessage("assistant", "1286.40万元")]
    question = "和上一年相比增加了多少？"
    problem = await model.rewrite(history, question)
    budget = paragraph("qinghe_budget_2026.md", "收支总预算增加68.20万元")
    text, _ = await answer(question, [budget], problem=problem)
    first_quote = next(line for line in text.splitlines() if line.startswith("> "))
    assert first_quote.startswith("> 与2025年相比"), first_quote


async def test_no_evidence_says_nothing_was_found() -> None:
    text, _ = await answer("白石镇下辖多少个行政村？", [])
    assert text.startswith(OFFLINE_LABEL)
    assert "未检索到" in text


async def test_closing_the_stream_early_still_fills_usage() -> None:
    request = GenerationRequest(
        messages=[ChatMessage("user", "问题")],
        question=C01,
        problem_text=C01,
        evidence=[paragraph(*QINGHE_PROJECTS), paragraph(*XINGLAN_DEADLINE)],
        sufficient=True,
        stop_reason="sufficient",
        missing="",
    )
    stream = model.generate(request)
    first = await stream.deltas.__anext__()
    await stream.deltas.aclose()  # type: ignore[attr-defined]
    assert isinstance(first, str)
    assert stream.usage.completion_tokens == count_tokens(first)
    assert stream.usage.prompt_tokens == count_tokens("问题")


# --- rewrite -----------------------------------------------------------------------------


async def test_without_history_the_question_is_unchanged() -> None:
    assert await model.rewrite([], "如果需要延长，最多可以延长多少天？") == "如果需要延长，最多可以延长多少天？"


async def test_a_follow_up_gets_the_subject_of_the_previous_question() -> None:
    history = [
        ChatMessage("user", "云岭县行政许可申请受理后多少个工作日内作出决定？"),
        ChatMessage("assistant", "18个工作日内。"),
    ]
    rewritten = await model.rewrite(history, "如果需要延长，最多可以延长多少天？")
    # Read as a person would write it: the earlier topic, then the user's words unchanged;
    # no keyword fragments ("云岭县 行政许可 …：") in front.
    assert rewritten == "云岭县行政许可申请受理后，如果需要延长，最多可以延长多少天？"


async def test_the_summary_message_is_not_taken_for_the_previous_question() -> None:
    summary = ChatMessage("user", SUMMARY_PREFIX + "问：星澜科技男员工的陪产假有几天？｜答：15天。")
    recent = [ChatMessage("user", "云岭县图书馆的成人读者证一次能借几本书？"), ChatMessage("assistant", "6册。")]
    rewritten = await model.rewrite([summary, *recent], "逾期怎么收费？")
    assert rewritten.startswith("云岭县") and "星澜" not in rewritten
    only_summary = await model.rewrite([summary], "婚假呢？")
    assert only_summary.startswith("星澜")


async def test_a_question_naming_its_own_subject_keeps_it() -> None:
    history = [ChatMessage("user", "青禾乡2026年的部门收入预算总额是多少？"), ChatMessage("assistant", "1286.40万元")]
    rewritten = await model.rewrite(history, "白石镇呢？")
    assert rewritten == "白石镇2026年的部门收入预算总额是多少？"  # the same question, of the new subject


# --- summarize ---------------------------------------------------------------------------


async def test_summary_keeps_previous_lines_and_every_question() -> None:
    long_question = "星澜科技员工去一类城市出差，每晚住宿标准是多少？" * 4
    turns = [
        HistoryTurn(
            "白石镇下辖多少个行政村？",
            f"{OFFLINE_LABEL}\n\n下辖14个行政村和2个社区。【云岭县白石镇人民政府2026年部门预算说明】",
        ),
        HistoryTurn(long_question, "一类城市每人每晚不超过550元。" + "其他说明。" * 60),
    ]
    summary = await model.summarize("问：旧问题｜答：旧回答", turns)
    lines = summary.splitlines()
    assert lines[0] == "问：旧问题｜答：旧回答"
    assert (
        lines[1]
        == "问：白石镇下辖多少个行政村？｜答：下辖14个行政村和2个社区。【云岭县白石镇人民政府2026年部门预算说明】"
    )
    assert lines[2].startswith(f"问：{long_question}｜答：一类城市每人每晚不超过550元。")
    assert len(lines[2].split("｜答：", 1)[1]) <= 120
    assert OFFLINE_LABEL not in summary
    assert await model.summarize("问：旧问题｜答：旧回答", turns) == summary  # deterministic


async def test_summary_gist_skips_the_part_headers_of_an_offline_answer() -> None:
    offline_answer = f"{OFFLINE_LABEL}\n\n1. 白石镇下辖多少个行政村？\n下辖14个行政村和2个社区。【预算说明】"
    summary = await model.summarize("", [HistoryTurn("白石镇下辖多少个行政村？", offline_answer)])
    assert summary == "问：白石镇下辖多少个行政村？｜答：下辖14个行政村和2个社区。【预算说明】"


async def test_a_colloquial_word_is_not_taken_for_a_new_subject() -> None:
    """jieba glues 输错 into an unknown word that looks like a name; it must not replace 星澜科技."""
    history = [
        ChatMessage("user", "星澜科技对员工登录密码的长度有什么要求？"),
        ChatMessage("assistant", "不少于12位。"),
    ]
    rewritten = await model.rewrite(history, "连续输错会怎么样？")
    assert rewritten == "星澜科技对员工登录密码的长度，连续输错会怎么样？"


async def test_each_of_two_named_subjects_becomes_its_own_part_and_a_comparison_joins_the_last() -> None:
    assert split_question("白石和青禾两边今年给公车加油、修车的钱各安排了多少？哪边花得多？") == [
        "白石今年给公车加油、修车的钱安排了多少？",
        "青禾今年给公车加油、修车的钱安排了多少？哪边花得多？",
    ]
    assert split_question("各级部门的预算是多少？") == ["各级部门的预算是多少？"]
