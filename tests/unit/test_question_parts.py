"""Splitting compound questions into the parts that each need their own evidence."""

from __future__ import annotations

import pytest

from kbcore.models.offline.question_parts import normalise_query, split_question


def test_sentence_ends_and_connectives_split_parts() -> None:
    parts = split_question(
        "青禾乡2026年的项目支出预算是多少万元？另外，星澜科技规定员工应当在费用发生后多少日内提交报销申请？"
    )
    assert parts == [
        "青禾乡2026年的项目支出预算是多少万元？",
        "星澜科技规定员工应当在费用发生后多少日内提交报销申请？",
    ]


def test_a_clause_joined_by_yiji_is_its_own_part() -> None:
    parts = split_question("请说明行政复议的一般申请期限，以及某乡2026年行政审批服务中心的预算金额")
    assert len(parts) == 2
    assert parts[1].startswith("某乡2026年")


def test_respectively_gives_one_part_per_subject_with_the_shared_predicate() -> None:
    parts = split_question("白石镇和青禾乡2026年的“三公”经费预算分别是多少？")
    assert parts == ["白石镇2026年的“三公”经费预算是多少？", "青禾乡2026年的“三公”经费预算是多少？"]


def test_respectively_with_three_subjects_keeps_the_shared_date_in_front() -> None:
    parts = split_question("请问2026年白石镇、青禾乡和云岭县的预算分别是多少？")
    assert parts == [
        "请问2026年白石镇的预算是多少？",
        "请问2026年青禾乡的预算是多少？",
        "请问2026年云岭县的预算是多少？",
    ]


def test_respectively_keeps_model_codes_whole() -> None:
    assert split_question("澄风AP-360和驰骋E5的额定功率分别是多少？") == [
        "澄风AP-360的额定功率是多少？",
        "驰骋E5的额定功率是多少？",
    ]


def test_a_shared_county_scope_moves_to_every_subject() -> None:
    assert split_question("云岭县实验小学和县图书馆分别在哪里？") == [
        "云岭县实验小学在哪里？",
        "云岭县县图书馆在哪里？",
    ]


def test_and_without_respectively_is_one_question() -> None:
    assert split_question("白石镇下辖多少个行政村和社区？") == ["白石镇下辖多少个行政村和社区？"]


def test_a_framing_lead_in_is_not_a_part() -> None:
    parts = split_question("请分别说明：青禾乡农村人居环境整治项目安排了多少资金？驰骋E5的锂电池保修多久？")
    assert parts == ["青禾乡农村人居环境整治项目安排了多少资金？", "驰骋E5的锂电池保修多久？"]


def test_a_tail_without_content_words_joins_the_part_before_it() -> None:
    question = "星澜科技配发的笔记本电脑丢了，员工需要在多长时间内报告？还要做什么？"
    assert split_question(question) == [question]


def test_a_short_part_with_a_content_word_stays_separate() -> None:
    parts = split_question("云岭县行政机关受理行政许可申请后，一般要在多长时间内作出决定？能不能延长？")
    assert parts[1] == "能不能延长？"


@pytest.mark.parametrize("question", ["", "   ", "？？"])
def test_a_question_without_words_comes_back_as_one_part(question: str) -> None:
    assert len(split_question(question)) == 1


def test_query_identity_ignores_case_space_and_punctuation() -> None:
    assert normalise_query("驰骋 E5，续航里程？") == normalise_query("驰骋e5续航里程")
    assert normalise_query("ＡＰ－360") == normalise_query("ap-360")
    assert normalise_query("续航里程") != normalise_query("续航时间")
