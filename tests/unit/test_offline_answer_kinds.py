"""The offline model's reading of what a part asks for, and of which sentence answers it.

``answer_kinds`` says what kind of value a part asks for and whether a sentence holds one;
``answering`` picks the sentence that answers a paraphrased part, and refuses when the choice
would be a guess or the document is another subject's; ``rewrite`` leaves complete questions
alone and lends a subject only to the ones that lean on the question before.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kbcore.models.base import ChatMessage, EvidenceParagraph
from kbcore.models.offline.answer_kinds import (
    AnswerKind,
    asked_kinds,
    asking_clauses,
    carries,
    carries_any,
    without_kind_words,
)
from kbcore.models.offline.answering import THING_AFFINITY, Affinity, answering_sentences, unplaced_things
from kbcore.models.offline.evidence import prepare
from kbcore.models.offline.rewrite import standalone_question, stands_alone
from kbcore.models.offline.terms import terms_of

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "kb"

# --- answer_kinds: what a part asks for ---------------------------------------------------


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        ("每个月能领多少高寿补助？", AnswerKind.MONEY),
        ("能报几成？", AnswerKind.PERCENT),
        ("住酒店一晚最多给报多少？", AnswerKind.AMOUNT_OR_SHARE),
        ("多久能办好？", AnswerKind.DURATION),
        ("几点到几点能进去？", AnswerKind.TIME),
        ("打哪个电话？", AnswerKind.PHONE),
        ("咋办？", AnswerKind.PROCEDURE),
        ("能不能带狗进去？", AnswerKind.YES_NO),
        ("一张卡能同时在几台手机上登？", AnswerKind.COUNT),
    ],
)
def test_a_part_asks_for_the_kind_its_words_name(part: str, kind: AnswerKind) -> None:
    assert asked_kinds(part) == {kind}


def test_a_question_about_paying_asks_money_not_yes_or_no() -> None:
    assert asked_kinds("要花钱吗？") == {AnswerKind.MONEY}


def test_a_discount_asked_with_meiyou_asks_an_amount_or_share_only() -> None:
    assert asked_kinds("停车费有啥优惠没有？") == {AnswerKind.AMOUNT_OR_SHARE}


def test_working_days_asked_with_ge_are_a_duration_not_a_count() -> None:
    assert asked_kinds("多少个工作日能办完？") == {AnswerKind.DURATION}


def test_a_general_what_question_asks_no_kind() -> None:
    assert asked_kinds("有什么讲究？") == frozenset()


# --- answer_kinds: what a sentence carries ------------------------------------------------


def test_a_monthly_sum_carries_money() -> None:
    assert carries(AnswerKind.MONEY, "每人每月70元")


def test_halving_a_fee_carries_a_share_but_no_sum() -> None:
    sentence = "首2小时停车费减半收取"
    assert carries(AnswerKind.PERCENT, sentence)
    assert carries(AnswerKind.AMOUNT_OR_SHARE, sentence)
    assert not carries(AnswerKind.MONEY, sentence)


def test_a_percentage_is_a_share_not_money() -> None:
    assert carries(AnswerKind.PERCENT, "报销比例为75%")
    assert not carries(AnswerKind.MONEY, "报销比例为75%")


def test_an_ordinal_month_is_not_a_count() -> None:
    assert not carries(AnswerKind.COUNT, "每季度第一个月的15日前")


def test_one_person_in_chinese_numerals_is_a_count() -> None:
    assert carries(AnswerKind.COUNT, "只可搭载一名未成年人")


def test_a_hotline_number_is_a_phone_but_a_year_is_not() -> None:
    assert carries(AnswerKind.PHONE, "服务热线96688")
    assert carries(AnswerKind.PHONE, "请拨打0871-6123456")
    assert not carries(AnswerKind.PHONE, "自2026年1月1日起施行")


def test_working_days_in_digits_or_numerals_are_a_duration() -> None:
    assert carries(AnswerKind.DURATION, "在3个工作日内上门")
    assert carries(AnswerKind.DURATION, "在三个工作日内上门")


def test_an_age_in_full_years_is_no_duration() -> None:
    assert not carries(AnswerKind.DURATION, "12周岁以下儿童不得进入病区探视")
    assert carries(AnswerKind.DURATION, "每2周补电一次")


def test_a_clock_time_and_a_weekday_are_times() -> None:
    assert carries(AnswerKind.TIME, "8:30至17:30开放")
    assert carries(AnswerKind.TIME, "周一闭馆")


def test_no_kind_asked_lets_any_sentence_through_but_an_asked_kind_must_be_held() -> None:
    assert carries_any(frozenset(), "本办法自发布之日起施行。")
    assert not carries_any(frozenset({AnswerKind.PHONE}), "本办法自发布之日起施行。")


# --- answer_kinds: the clauses that ask ---------------------------------------------------


def test_the_scene_setting_clauses_are_dropped_and_the_asking_one_kept() -> None:
    asking = asking_clauses("我奶奶今年83，户口在青禾乡，每个月能领多少高寿补助？")
    assert "高寿补助" in asking
    assert "奶奶" not in asking and "青禾乡" not in asking and "83" not in asking


def test_the_question_words_are_removed_from_the_asking_clause() -> None:
    asking = asking_clauses("县城新房子要通自来水，递了申请以后多久有人上门看现场？")
    assert "多久" not in asking
    assert "上门看现场" in asking and "自来水" not in asking


def test_a_clause_that_only_compares_asks_nothing_of_the_evidence() -> None:
    asking = asking_clauses("白石和青禾两边今年各安排了多少？哪家掏得多？")
    assert "掏" not in asking and "哪家" not in asking
    assert "安排了多少" not in asking and "白石和青禾" in asking


def test_a_part_with_no_asking_clause_is_kept_whole() -> None:
    assert asking_clauses("周一闭馆") == "周一闭馆"


def test_the_words_naming_the_kind_are_removed_and_the_subject_kept() -> None:
    assert "优惠" not in without_kind_words("停车费有啥优惠没有？")
    assert "停车费" in without_kind_words("停车费有啥优惠没有？")
    stripped = without_kind_words("打哪个电话叫人来修？")
    assert "电话" not in stripped and "叫人来修" in stripped


# --- answering: the sentence that answers a paraphrased part ------------------------------

ALLOWANCE = "青禾乡高龄老人生活津贴发放实施办法"
ALLOWANCE_EVIDENCE = [
    EvidenceParagraph(
        "a1", ALLOWANCE, "", "具有青禾乡户籍并在本乡居住、年满80周岁的老年人，可以按本办法申领高龄老人生活津贴。"
    ),
    EvidenceParagraph("a2", ALLOWANCE, "", "80周岁至89周岁的，每人每月70元；90周岁至99周岁的，每人每月150元。"),
    EvidenceParagraph("a3", ALLOWANCE, "", "100周岁及以上的，每人每月600元。"),
    EvidenceParagraph("a4", ALLOWANCE, "", "高龄津贴按季度发放，于每季度第一个月的15日前打入本人的社会保障卡。"),
]
LEAVE = "星澜科技员工考勤与休假管理制度"
LEAVE_EVIDENCE = [
    EvidenceParagraph(
        "l1",
        LEAVE,
        "",
        "员工累计工作已满1年不满10年的，年休假5天。已满10年不满20年的，年休假10天。已满20年的，年休假15天。",
    )
]
PURIFIER = "澄风AP-360空气净化器使用说明书"
PURIFIER_EVIDENCE = [
    EvidenceParagraph(
        "c1",
        PURIFIER,
        "",
        "E1：空气质量传感器故障，请清洁传感器进风口后重启。E2：风机运转异常，请立即断电并联系售后。"
        "E3：滤网未安装到位，请重新安装滤网并关闭后盖。",
    )
]
# Opening hours whose clock times state no band ("30至17", "30至12"): only the weekday tells them apart.
SERVICE = "云岭县政务服务中心办事指南"
SERVICE_EVIDENCE = [EvidenceParagraph("g1", SERVICE, "", "周一至周五8:30至17:30开放。周六8:30至12:30开放。")]
LIBRARY = "云岭县图书馆读者服务规则"
LIBRARY_EVIDENCE = [EvidenceParagraph("b1", LIBRARY, "开放时间", "图书馆周二至周日9:00至20:00开放。")]
GRANTS = "云岭县职工补贴办法"


def answer(own: str, evidence: list[EvidenceParagraph], affinity: Affinity | None = None) -> list[str]:
    """The sentences ``answering_sentences`` quotes for ``own``, every paragraph a candidate."""
    passages = prepare(evidence)
    quotes = answering_sentences(own, asked_kinds(own), passages, passages, affinity)
    return [q.sentence for q in quotes]


def test_an_age_picks_the_sentence_stating_its_band() -> None:
    found = answer("我奶奶今年83，户口在青禾乡，每个月能领多少高寿补助？", ALLOWANCE_EVIDENCE)
    assert found == ["80周岁至89周岁的，每人每月70元；90周岁至99周岁的，每人每月150元。"]


def test_an_age_in_chinese_numerals_picks_the_same_band() -> None:
    found = answer("我奶奶今年八十三，户口在青禾乡，每个月能领多少高寿补助？", ALLOWANCE_EVIDENCE)
    assert found == ["80周岁至89周岁的，每人每月70元；90周岁至99周岁的，每人每月150元。"]


def test_years_of_service_in_chinese_numerals_fall_in_their_band() -> None:
    found = answer("我参加工作十二年了，刚跳槽到星澜，头一年能歇几天带薪年假？", LEAVE_EVIDENCE)
    assert found == ["已满10年不满20年的，年休假10天。"]


@pytest.mark.parametrize(("code", "wanted"), [("E2", "风机运转异常"), ("E3", "滤网未安装到位")])
def test_a_code_named_in_the_question_picks_the_sentence_writing_it(code: str, wanted: str) -> None:
    found = answer(f"澄风净化器屏幕上冒出个{code}，咋办？", PURIFIER_EVIDENCE)
    assert len(found) == 1 and wanted in found[0]


@pytest.mark.parametrize("day", ["礼拜六", "星期六", "周六"])
def test_every_spelling_of_a_weekday_picks_the_sentence_naming_it(day: str) -> None:
    assert answer(f"{day}去县政务服务中心办事，几点开放？", SERVICE_EVIDENCE) == ["周六8:30至12:30开放。"]


def test_libai_yi_is_zhou_yi() -> None:
    assert answer("礼拜一去县政务服务中心办事，几点开放？", SERVICE_EVIDENCE) == ["周一至周五8:30至17:30开放。"]


def test_without_a_weekday_the_two_opening_hours_are_a_guess() -> None:
    assert answer("去县政务服务中心办事，几点开放？", SERVICE_EVIDENCE) == []


def test_two_sentences_answering_equally_well_give_no_answer() -> None:
    tied = [EvidenceParagraph("t1", GRANTS, "", "甲类人员每人每月补贴70元。乙类人员每人每月补贴80元。")]
    assert answer("每个月能领多少补贴？", tied) == []


def test_one_sentence_alone_answers_where_two_tie() -> None:
    single = [EvidenceParagraph("t1", GRANTS, "", "甲类人员每人每月补贴70元。")]
    assert answer("每个月能领多少补贴？", single) == ["甲类人员每人每月补贴70元。"]


def test_a_document_of_the_named_subject_is_used() -> None:
    assert answer("我奶奶今年83，户口在青禾乡，每个月能领多少高寿补助？", ALLOWANCE_EVIDENCE)


def test_another_subjects_document_is_never_used() -> None:
    assert answer("我奶奶今年83，户口在白石镇，每个月能领多少高寿补助？", ALLOWANCE_EVIDENCE) == []


SICK_PAY = "星澜科技员工考勤与休假管理办法"
SICK_PAY_EVIDENCE = [
    EvidenceParagraph("s1", SICK_PAY, "", "一个自然年度内累计病假超过30天的，超过部分按本人基本工资的60%发放。")
]


def test_a_place_the_tagger_reads_into_everyday_words_does_not_veto_the_named_subject() -> None:
    # jieba tags 里加 (Riga) in "一年里加起来"; beside 星澜, which the evidence has, it is no subject.
    found = answer("在星澜因为生病在家歇着，一年里加起来一个多月，多出来那些天工资按几成发？", SICK_PAY_EVIDENCE)
    assert found == ["一个自然年度内累计病假超过30天的，超过部分按本人基本工资的60%发放。"]


def test_a_thing_the_document_lacks_entirely_gets_no_answer() -> None:
    assert answer("县图书馆里的咖啡厅几点开门？", LIBRARY_EVIDENCE) == []


def test_an_affinity_below_the_threshold_vetoes_the_document() -> None:
    below = {("咖啡厅", LIBRARY): THING_AFFINITY - 0.03}
    assert answer("县图书馆里的咖啡厅几点开门？", LIBRARY_EVIDENCE, below) == []


def test_an_affinity_above_the_threshold_lets_the_document_answer() -> None:
    above = {("咖啡厅", LIBRARY): THING_AFFINITY + 0.03}
    assert answer("县图书馆里的咖啡厅几点开门？", LIBRARY_EVIDENCE, above) == ["图书馆周二至周日9:00至20:00开放。"]


def test_a_weekday_numeral_does_not_fall_in_a_clock_time() -> None:
    hours = [EvidenceParagraph("g1", SERVICE, "", "周一至周五8:30至17:30开放。周六9:00至12:00开放。")]
    assert answer("礼拜三去县政务服务中心办事，几点开放？", hours) != ["周六9:00至12:00开放。"]


def test_the_things_no_evidence_mentions_are_unplaced() -> None:
    parts = ["县图书馆里的咖啡厅几点开门？"]
    assert unplaced_things(parts, prepare(LIBRARY_EVIDENCE)) == ["咖啡厅"]


def test_a_thing_the_evidence_mentions_is_placed() -> None:
    assert unplaced_things(["县图书馆几点开门？"], prepare(LIBRARY_EVIDENCE)) == []


# --- rewrite: complete questions stand alone, follow-ups borrow ---------------------------


def _turns(name: str, kind: str) -> list[tuple[str, str, str]]:
    """(id, first question, second question) of the samples of ``kind`` in ``name``."""
    rows = [json.loads(line) for line in (SAMPLES / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["id"], r["turns"][0]["question"], r["turns"][1]["question"]) for r in rows if r["kind"] == kind]


def _history(*questions: str) -> list[ChatMessage]:
    return [m for q in questions for m in (ChatMessage("user", q), ChatMessage("assistant", "（回答略）"))]


SHIFTS = _turns("questions-shift.jsonl", "shift")
_LEANS_BACK = re.compile(r"^(?:那|如果|和.{0,8}?相比)")
FOLLOWUPS = [
    t
    for t in _turns("questions.jsonl", "followup") + _turns("questions-hard.jsonl", "followup")
    if _LEANS_BACK.match(t[2]) or len(terms_of(t[2])) < 3
]


def test_the_samples_hold_the_pairs_these_tests_expect() -> None:
    assert len(SHIFTS) == 12
    assert len(FOLLOWUPS) >= 10


@pytest.mark.parametrize(("first", "second"), [t[1:] for t in SHIFTS], ids=[t[0] for t in SHIFTS])
def test_a_complete_question_after_an_unrelated_one_keeps_its_own_words_whole(first: str, second: str) -> None:
    """The rewrite only proposes: the question stays whole in it, and the first round searches
    it as asked beside the rewrite, whose lent words the evidence then keeps or drops
    (tests/services/test_borrowing_by_evidence.py)."""
    assert second.strip() in standalone_question(_history(first), second)


@pytest.mark.parametrize(
    ("first", "second"),
    [pytest.param(*t[1:], id=t[0]) for t in FOLLOWUPS],
)
def test_a_follow_up_that_leans_on_the_question_before_borrows_from_it(first: str, second: str) -> None:
    assert standalone_question(_history(first), second) != second


def test_a_long_unrelated_history_leaves_a_complete_question_whole() -> None:
    unrelated = [q for _, q, _ in _turns("questions.jsonl", "followup") + _turns("questions-hard.jsonl", "followup")]
    history = _history(*(unrelated * 5)[:50])
    question = "家里自来水管子爆了，打哪个电话叫人来修？"
    assert question in standalone_question(history, question)


def test_a_question_naming_its_subject_stands_alone() -> None:
    assert stands_alone("我奶奶今年83，户口在青禾乡，每个月能领多少高寿补助？")
    assert not stands_alone("那报的比例呢？")


@pytest.mark.parametrize("question", ["😀", "👍👍？", "？？？", "。。。", "", "   "])
def test_a_question_without_words_is_not_glued_to_the_one_before(question: str) -> None:
    assert stands_alone(question)
    rewritten = standalone_question(
        _history("县里的居民医保，去市里的大医院住院，自己先得掏多少才开始给报？"), question
    )
    assert rewritten == question
