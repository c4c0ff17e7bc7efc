"""What the offline answer says is decided by what retrieval returned: a part is said to have
nothing in the documents only when no retrieved paragraph shares its words; a quote that states
the asked kind of value about the asked subject is not labelled as unconfirmed; a comparison
asked is worked out from the quoted numbers. Over documents written here (leave rules, a price
list), with the loop, the offline model and the embedder as the retrieval service runs them."""

from __future__ import annotations

import pytest

from gateway.labels import progress_line
from kbcore.models.base import EvidenceParagraph, GenerationRequest, PartSupport, PartVerdict, SupportQuote
from kbcore.models.offline.answer_text import NOTHING_RELEVANT, UNCONFIRMED_LEAD, UNVERIFIED_LEAD, answer_pieces
from kbcore.models.offline.model import OfflineExtractiveModel, compose_answer
from services.retrieval.search.loop import Assessed, LoopLimits, LoopResult, RetrievalLoop, Retrieving
from services.retrieval.store.base import Hit

LEAVE = "青川物流员工假期规定"
PRICES = "青川物流寄件价目表"


def lexical_answer(question: str, paragraphs: list[tuple[str, str]]) -> str:
    """The answer the chat service composes when the request carries no judged support (the
    evidence judged by shared words alone)."""
    evidence = [EvidenceParagraph(f"p{i}", name, "", text) for i, (name, text) in enumerate(paragraphs)]
    request = GenerationRequest(
        messages=[],
        question=question,
        problem_text=question,
        evidence=evidence,
        sufficient=False,
        stop_reason="",
        missing="",
    )
    return "".join(compose_answer(request))


def test_a_shortened_word_at_rank_two_is_quoted_not_called_missing() -> None:
    answer = lexical_answer(
        "年假有几天？",
        [
            (LEAVE, "员工请病假须提交医院证明，病假期间按基本工资发放。"),
            (LEAVE, "入职满1年的员工每年享有带薪年休假7天，当年未休完的可顺延至次年一季度。"),
        ],
    )
    assert NOTHING_RELEVANT not in answer and UNVERIFIED_LEAD not in answer, answer
    assert "年休假7天" in answer


def test_a_part_no_paragraph_shares_a_word_with_is_not_in_the_documents() -> None:
    answer = lexical_answer("公司班车几点发车？", [(LEAVE, "员工请病假须提交医院证明，病假期间按基本工资发放。")])
    assert NOTHING_RELEVANT in answer and "病假" not in answer


def test_the_closest_passage_is_not_said_to_be_missing() -> None:
    nearest = PartSupport(
        "丧假能休几天？", (SupportQuote("p1", LEAVE, "员工直系亲属去世的，可申请丧假。", 0.4),), verified=False
    )
    assert nearest.verdict is PartVerdict.NEAREST
    text = "".join(answer_pieces("丧假能休几天？", True, [nearest]))
    assert text.count(UNCONFIRMED_LEAD) == 1 and UNVERIFIED_LEAD not in text and NOTHING_RELEVANT not in text


@pytest.mark.parametrize(
    ("question", "sentence", "said"),
    [
        (
            "同城件和跨省件哪个贵？贵多少？",
            "同城件首重收费12元，跨省件首重收费20元。",
            ("跨省", "20元", "同城件", "12元", "多8元"),
        ),
        (
            "标准件和加急件谁送得快？快多少？",
            "标准件承诺3天送达，加急件承诺1天送达。",
            ("标准件", "3天", "急件", "1天", "多2天"),
        ),
    ],
)
def test_a_comparison_is_worked_out_from_the_quoted_numbers(
    question: str, sentence: str, said: tuple[str, str, str, str, str]
) -> None:
    answered = PartSupport(question, (SupportQuote("p1", PRICES, sentence, 0.9),))
    line = "".join(answer_pieces(question, True, [answered])).splitlines()[-1]
    larger, large, smaller, small, difference = said
    cited = f"《{PRICES}》"
    assert line.startswith("按所引资料计算：" + larger), line
    assert f"（{large}，{cited}）比{smaller}（{small}，{cited}）{difference}" in line, line


def test_values_in_different_units_are_not_compared() -> None:
    question = "保价费和包装费哪个多？"
    answered = PartSupport(question, (SupportQuote("p1", PRICES, "保价费为声明价值的1%，包装费每件5元。", 0.9),))
    text = "".join(answer_pieces(question, True, [answered]))
    assert "无法比较" in text and "单位不同" in text and "多" not in text.split("无法比较")[1].replace("哪个多", "")


def test_a_question_that_compares_nothing_gets_no_comparison() -> None:
    answered = PartSupport(
        "同城件多少钱？", (SupportQuote("p1", PRICES, "同城件首重收费12元，跨省件首重收费20元。", 0.9),)
    )
    text = "".join(answer_pieces("同城件多少钱？", True, [answered]))
    assert "按所引资料计算" not in text and "无法比较" not in text


async def test_progress_says_still_looking_only_before_a_round_that_runs_and_one_line_a_round() -> None:
    leave = Hit("h1", "ds", "d1", LEAVE, "", "员工请病假须提交医院证明，病假期间按基本工资发放。", 0, 0.9)
    searched: list[str] = []

    async def search(query: str) -> list[Hit]:
        searched.append(query)
        return [leave]

    model = OfflineExtractiveModel()
    loop = RetrievalLoop(model, search, LoopLimits(max_rounds=3), judge=model)
    events = [e async for e in loop.run("年假有几天？", [], True)]
    result = events[-1]
    assert isinstance(result, LoopResult)
    rounds = [e for e in events if isinstance(e, Retrieving)]
    verdicts = [e for e in events if isinstance(e, Assessed)]
    assert [e.round for e in rounds] == [t.round for t in result.rounds], "one progress event per round"
    assert all(e.queries == tuple(t.queries) for e, t in zip(rounds, result.rounds, strict=True))
    assert "年假" in searched, "the part's own words are searched before its absence is concluded"
    ran = {e.round for e in rounds}
    assert [v.continues for v in verdicts] == [v.round + 1 in ran for v in verdicts], "still looking = a round runs"
    stopped = progress_line({"phase": "assessed", "sufficient": False, "missing": "缺少年假", "continues": False})
    looking = progress_line({"phase": "assessed", "sufficient": False, "missing": "缺少年假", "continues": True})
    assert stopped is not None and not stopped.startswith("继续查找资料") and looking == "继续查找资料：缺少年假"
    joined = progress_line({"phase": "retrieving", "round": 1, "query": "甲", "queries": ["甲", "乙"]})
    assert joined == "第 1 轮检索：甲；乙"
