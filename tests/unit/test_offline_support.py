"""The offline model judging parts by meaning: a matcher's cosines verify a paragraph only when it
stands out among its own document's evidence; otherwise the nearest evidence is quoted and the
part is still named unverifiable. Bad input gives a defined answer, never an exception."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from kbcore.answer_notice import OFFLINE_LABEL
from kbcore.models.base import EvidenceParagraph, GenerationRequest, PartSupport
from kbcore.models.offline.answer_text import unverified_parts
from kbcore.models.offline.evidence import need, prepare
from kbcore.models.offline.model import OfflineExtractiveModel, compose_answer
from kbcore.models.offline.support import judge_parts

pytestmark = pytest.mark.asyncio

HOSPITAL = "云岭县人民医院住院患者探视与陪护管理规定"
ESCORT = EvidenceParagraph(
    "p1", HOSPITAL, "", "第六条 住院患者原则上限留1名陪护人员。手术后72小时内可以增加1名陪护人员。"
)
BED = EvidenceParagraph("p2", HOSPITAL, "", "第八条 医院为陪护人员提供折叠陪护床租用服务，每晚收费15元，押金100元。")
PETS = EvidenceParagraph("p3", HOSPITAL, "", "第九条 陪护人员不得携带宠物进入病区。")
EVIDENCE = [ESCORT, BED, PETS]
QUESTION = "我爸在县医院刚做完手术，头几天能多留一个家里人陪床吗？"
# Asks no kind of value (no amount, duration…): meaning and words alone judge it.
OPEN_QUESTION = "我爸在县医院刚做完手术，家里人陪床有什么讲究？"


class FixedMatcher:
    """Cosines chosen by the test, one row for every part."""

    def __init__(self, row: Sequence[float]) -> None:
        self.row = list(row)

    async def similarities(self, parts: Sequence[str], evidence: Sequence[EvidenceParagraph]) -> list[list[float]]:
        return [self.row[: len(evidence)] for _ in parts]

    async def affinities(self, terms: Sequence[str], names: Sequence[str]) -> list[list[float]]:
        """Every asked thing near every document: these tests judge sentences, not subjects."""
        return [[1.0] * len(names) for _ in terms]


def request(question: str, evidence: list[EvidenceParagraph], support: Sequence[PartSupport] = ()) -> GenerationRequest:
    return GenerationRequest([], question, question, evidence, False, "max_rounds", "", support=support)


async def test_a_paraphrase_that_stands_out_in_its_document_is_verified_and_quoted() -> None:
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.93, 0.88, 0.87]))
    support = await model.support(QUESTION, [], EVIDENCE)
    assert [s.verified for s in support] == [True]
    assert support[0].quotes[0].paragraph_id == "p1"
    text = "".join(compose_answer(request(QUESTION, EVIDENCE, support)))
    assert "72小时" in text and "无法根据资料核实" not in text
    decision = json.loads(await model.assess(QUESTION, [], EVIDENCE, [QUESTION]))
    assert decision["sufficient"] is True


async def test_a_best_paragraph_that_barely_leads_is_only_the_nearest_evidence() -> None:
    """A part that asks no kind of value is judged by meaning: a bare lead verifies nothing."""
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.899, 0.895, 0.893]))
    support = await model.support(OPEN_QUESTION, [], EVIDENCE)
    assert support[0].quotes and not support[0].verified
    text = "".join(compose_answer(request(OPEN_QUESTION, EVIDENCE, support)))
    assert "最接近的内容" in text
    assert "家里人陪床有什么讲究" in unverified_parts(text)
    decision = json.loads(await model.assess(OPEN_QUESTION, [], EVIDENCE, [OPEN_QUESTION]))
    assert decision["sufficient"] is False and decision["missing"]


async def test_a_sentence_holding_the_asked_kind_of_value_verifies_a_paraphrase() -> None:
    """ "头几天能多留一个" asks a duration and a count: the sentence holding 72小时 and 1名 about
    the hospital's escorts answers it, though the cosines barely tell the paragraphs apart."""
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.899, 0.895, 0.893]))
    support = await model.support(QUESTION, [], EVIDENCE)
    assert support[0].verified
    assert "72小时" in support[0].quotes[0].sentence


async def test_a_paraphrase_without_a_sentence_of_the_asked_kind_stays_nearest() -> None:
    """The same question over evidence whose sentences hold no duration is not verified."""
    no_duration = [BED, PETS, EvidenceParagraph("p4", HOSPITAL, "", "陪护人员应当遵守病区管理制度。")]
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.899, 0.895, 0.893]))
    support = await model.support(QUESTION, [], no_duration)
    assert not support[0].verified


async def test_a_lone_paragraph_of_its_document_is_not_verified_by_meaning() -> None:
    """Against other documents' paragraphs any paragraph of the right document stands out."""
    other = EvidenceParagraph("q1", "云岭县图书馆借阅服务规则", "", "读者证可免费办理。")
    evidence = [ESCORT, other, EvidenceParagraph("q2", "云岭县图书馆借阅服务规则", "", "每次借书10册。")]
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.95, 0.80, 0.80]))
    support = await model.support(OPEN_QUESTION, [], evidence)
    assert not support[0].verified


async def test_words_alone_still_verify_without_a_matcher() -> None:
    question = "云岭县人民医院每晚陪护床的押金是多少？"
    supports = judge_parts([question], [need(question, part=question, asked=question)], prepare(EVIDENCE))
    assert supports[0].verified
    assert any("押金100元" in q.sentence for q in supports[0].quotes)


@pytest.mark.parametrize(
    "question",
    ["？？？！！", "😀😀👍", "。。。", "住院" * 4000],
)
async def test_bad_questions_get_a_defined_answer(question: str) -> None:
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.9, 0.9, 0.9]))
    decision = json.loads(await model.assess(question, [], EVIDENCE, []))
    assert isinstance(decision["sufficient"], bool)
    support = await model.support(question, [], EVIDENCE)
    text = "".join(compose_answer(request(question, EVIDENCE, support)))
    assert text.startswith(OFFLINE_LABEL)


async def test_empty_and_foreign_evidence_get_a_defined_answer() -> None:
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.85]))
    assert "未检索到" in "".join(compose_answer(request(QUESTION, [])))
    assert all(not s.verified and not s.quotes for s in await model.support(QUESTION, [], []))
    english = [EvidenceParagraph("e1", "Visiting rules", "", "Visitors may stay until 8 pm. One escort per patient.")]
    support = await model.support(QUESTION, [], english)
    text = "".join(compose_answer(request(QUESTION, english, support)))
    assert "头几天能多留一个家里人陪床吗" in unverified_parts(text)
    assert json.loads(await model.assess(QUESTION, [], english, []))["sufficient"] is False


async def test_a_question_asking_each_of_two_subjects_is_not_answered_by_one_document() -> None:
    """One part per subject phrase; one product's warranty answers its own part, never both."""
    manual = "澄风AP-360空气净化器使用说明书"
    evidence = [
        EvidenceParagraph("w1", manual, "", "整机保修1年，电机保修2年。"),
        EvidenceParagraph("w2", manual, "", "预滤网每2周清洁一次。"),
        EvidenceParagraph("w3", manual, "", "滤网属于易耗品。"),
    ]
    question = "驰骋电驴的大架子，跟澄风空气净化器整台机器，质保期各是几年？"
    model = OfflineExtractiveModel(matcher=FixedMatcher([0.95, 0.85, 0.85]))
    bike, purifier = await model.support(question, [], evidence)
    assert bike.part.startswith("驰骋电驴的大架子") and purifier.part.startswith("澄风空气净化器")
    assert bike.quotes and not bike.verified
    assert json.loads(await model.assess(question, [], evidence, [question]))["sufficient"] is False
