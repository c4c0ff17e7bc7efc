"""A part is answered by a value of the kind it asks for, *as a value of that kind*.

"几号" is answered by a day ("10日前"), not by a period word ("每月") that every sum paid
monthly carries; "几点" by a clock time; a thing whose value is a sum ("押金", "补贴") makes a
part ask for money only when it asks for no other kind ("补贴几号到账？" asks a day). A time of
day the question names ("夜里") is answered by the clock span that covers it. A follow-up that
only names another condition ("那夜里呢？") asks the earlier question again, asking words kept.
Over documents written here, in wording of their own.
"""

from __future__ import annotations

import pytest

from kbcore.models.base import ChatMessage, EvidenceParagraph
from kbcore.models.offline.answer_kinds import AnswerKind, asked_kinds, carries
from kbcore.models.offline.answering import answering_sentences
from kbcore.models.offline.evidence import prepare
from kbcore.models.offline.rewrite import only_swaps_condition, standalone_question

STIPEND = "松溪区困难学生交通补贴办法"
STIPEND_EVIDENCE = [
    EvidenceParagraph("s1", STIPEND, "", "初中学生每人每月交通补贴60元，高中学生每人每月交通补贴90元。"),
    EvidenceParagraph("s2", STIPEND, "", "交通补贴按月发放，于每月10日前转入学生家长的银行账户。"),
]
FERRY = "松溪渡口轮渡票价公示"
FERRY_EVIDENCE = [
    EvidenceParagraph(
        "f1",
        FERRY,
        "",
        "轮渡在6:00至22:00运营，成人单程票价4元。22:00至次日6:00只开加班船，单程票价10元。",
    ),
]


def answer(own: str, evidence: list[EvidenceParagraph]) -> list[str]:
    passages = prepare(evidence)
    return [q.sentence for q in answering_sentences(own, asked_kinds(own), passages, passages)]


# --- what a part asks for -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        ("补贴每个月几号到账？", AnswerKind.DATE),
        ("最晚哪天要交材料？", AnswerKind.DATE),
        ("码头几点停航？", AnswerKind.TIME),
        ("什么时候开始受理？", AnswerKind.WHEN),
        ("租船押金多少？", AnswerKind.MONEY),
        ("补贴多久能批下来？", AnswerKind.DURATION),
    ],
)
def test_a_thing_worth_a_sum_asks_money_only_when_nothing_else_is_asked(part: str, kind: AnswerKind) -> None:
    assert asked_kinds(part) == {kind}


# --- what a sentence carries ----------------------------------------------------------------


def test_a_period_word_is_no_day_and_no_clock_time() -> None:
    assert not carries(AnswerKind.DATE, "每人每月交通补贴60元")
    assert not carries(AnswerKind.TIME, "每人每月交通补贴60元")
    assert carries(AnswerKind.WHEN, "每人每月交通补贴60元")  # "什么时候" may be answered by "每月"


def test_a_day_of_the_month_a_weekday_and_a_deadline_in_days_are_days() -> None:
    assert carries(AnswerKind.DATE, "于每月10日前转入")
    assert carries(AnswerKind.DATE, "每周三受理")
    assert carries(AnswerKind.DATE, "应在申请之日起30日内补齐")


def test_a_clock_time_is_a_time_but_a_day_is_not() -> None:
    assert carries(AnswerKind.TIME, "码头17:30停航")
    assert not carries(AnswerKind.TIME, "于每月10日前转入")


# --- which sentence answers ------------------------------------------------------------------


def test_asking_which_day_is_answered_by_the_day_not_by_the_monthly_sum() -> None:
    assert answer("松溪区 交通补贴 每月 几号发？", STIPEND_EVIDENCE) == [
        "交通补贴按月发放，于每月10日前转入学生家长的银行账户。"
    ]


def test_asking_the_sum_is_still_answered_by_the_sum() -> None:
    found = answer("初中学生每月交通补贴多少钱？", STIPEND_EVIDENCE)
    assert found == ["初中学生每人每月交通补贴60元，高中学生每人每月交通补贴90元。"]


@pytest.mark.parametrize(("when", "wanted"), [("夜里", "10元"), ("白天", "4元")])
def test_a_time_of_day_picks_the_sentence_whose_clock_span_covers_it(when: str, wanted: str) -> None:
    found = answer(f"松溪渡口轮渡，{when}坐一趟要多少钱？", FERRY_EVIDENCE)
    assert len(found) == 1 and wanted in found[0]


def test_without_a_time_of_day_the_two_fares_are_a_guess() -> None:
    assert answer("松溪渡口轮渡坐一趟要多少钱？", FERRY_EVIDENCE) == []


# --- a follow-up that only changes a condition ----------------------------------------------


def test_a_follow_up_naming_another_condition_keeps_the_earlier_asking_words() -> None:
    history = [ChatMessage("user", "松溪渡口轮渡单程票怎么收费？"), ChatMessage("assistant", "成人单程4元")]
    assert standalone_question(history, "那夜里呢？") == "松溪渡口轮渡单程票怎么收费，那夜里呢？"


@pytest.mark.parametrize("question", ["那票价比例呢？", "那要是行李很多呢？", "那押金多少呢？", "几号发？"])
def test_a_follow_up_that_asks_something_of_its_own_is_no_condition_swap(question: str) -> None:
    assert not only_swaps_condition(question)


def test_a_follow_up_asking_its_own_thing_keeps_only_the_earlier_topic() -> None:
    history = [ChatMessage("user", "松溪渡口轮渡单程票怎么收费？"), ChatMessage("assistant", "成人单程4元")]
    rewritten = standalone_question(history, "要是行李很多呢？")
    assert "收费" not in rewritten and rewritten.endswith("要是行李很多呢？")
