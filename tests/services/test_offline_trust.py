"""Where the offline (extractive) model's answer must be trustworthy: a complete question is
searched as asked, not glued to the one before; a verified part quotes the sentence that holds
the asked fact, of the asked subject, never a look-alike figure or a definition without the
value; a disabled paragraph's fact is never stood in for by its neighbour's; odd input and long
histories still end in a result. The real retrieval loop over the sample knowledge base, the
offline model judging by meaning as the retrieval service does."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as pb
from kbcore.models.base import ChatMessage, GenerationRequest, PartSupport, SupportQuote
from kbcore.models.offline.answer_text import unverified_parts
from kbcore.models.offline.model import OfflineExtractiveModel, compose_answer
from kbcore.rpc.stubs import RetrievalStubs
from services.retrieval.embedding.embedders import Embedder
from services.retrieval.search.evidence_matcher import EmbeddingMatcher
from services.retrieval.search.loop import LoopLimits, LoopResult, RetrievalLoop, as_model_evidence
from services.retrieval.search.query import Searcher, SearchSettings
from services.retrieval.store.base import Hit, VectorStore
from tests.harness import Stack
from tools.seed_demo import DEMO_DATASET_ID

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "kb"
PRICE = re.compile(r"\d+(?:\.\d+)?元")
ANSWERED = "（回答略）"

# The two towns' budget documents, as quotes name them (by their headings).
BAISHI = "云岭县白石镇人民政府2026年部门预算说明"
QINGHE = "云岭县青禾乡人民政府2026年部门预算说明"
TOWN_DOCUMENTS = {"白石": BAISHI, "青禾": QINGHE}


@dataclass(frozen=True)
class Asked:
    """One question through the loop: its result and the offline answer composed from it."""

    result: LoopResult
    answer: str

    @property
    def verified(self) -> list[PartSupport]:
        return [s for s in self.result.support if s.verified]

    @property
    def verified_quotes(self) -> list[SupportQuote]:
        return [q for s in self.verified for q in s.quotes]

    def describe(self) -> str:
        """The verdicts, for an assertion message."""
        lines = [f"problem_text={self.result.problem_text!r} sufficient={self.result.sufficient}"]
        for s in self.result.support:
            lines.append(f"  part={s.part!r} verified={s.verified}")
            lines.extend(f"    [{q.document_name}] {q.sentence}" for q in s.quotes)
        return "\n".join(lines)


class Asker:
    """The retrieval loop on the offline model over some datasets, as the retrieval service runs it."""

    def __init__(self, store: VectorStore, embedder: Embedder, dataset_ids: tuple[str, ...]) -> None:
        searcher = Searcher(store, embedder)

        async def search(query: str) -> list[Hit]:
            return await searcher.search(dataset_ids, query, SearchSettings(top_n=5))

        model = OfflineExtractiveModel(matcher=EmbeddingMatcher(embedder, store))
        self._loop = RetrievalLoop(model, search, LoopLimits(max_rounds=3), judge=model)  # as deployed

    async def __call__(self, question: str, history: Sequence[ChatMessage] = ()) -> Asked:
        result = [e async for e in self._loop.run(question, list(history), True)][-1]
        assert isinstance(result, LoopResult)
        request = GenerationRequest(
            [],
            question,
            result.problem_text,
            as_model_evidence(result.evidence),
            result.sufficient,
            "",
            result.missing,
            support=result.support,
        )
        return Asked(result, "".join(compose_answer(request)))


def after(earlier: str) -> list[ChatMessage]:
    """The history of a chat whose one earlier turn asked ``earlier``."""
    return [ChatMessage("user", earlier), ChatMessage("assistant", ANSWERED)]


@pytest.fixture
def ask(stack: Stack, store: VectorStore, embedder: Embedder) -> Asker:
    return Asker(store, embedder, (DEMO_DATASET_ID,))


# --- a complete question after an unrelated one is answered as asked -----------------------------


@pytest.mark.parametrize(
    ("earlier", "question", "borrowed"),
    [
        ("青禾乡政府今年公车要花多少钱？", "在县城中心商圈路边停车怎么收费？", ("青禾", "公车")),
        ("油烟机清洗一台多少钱？", "我想办残疾人证，要带什么材料？多久能办好？", ("油烟机", "清洗")),
    ],
    ids=["parking-after-official-car", "disability-card-after-hood-cleaning"],
)
async def test_a_complete_question_is_not_glued_to_the_one_before(
    ask: Asker, earlier: str, question: str, borrowed: tuple[str, ...]
) -> None:
    asked = await ask(question, after(earlier))
    # Round 1 searches the rewrite beside the question as asked, and its evidence drops the
    # lent words: the reading kept, the later rounds and the judged parts are free of them.
    assert question in asked.result.rounds[0].queries, asked.describe()
    searched = [asked.result.problem_text, *(q for r in asked.result.rounds[1:] for q in r.queries)]
    judged = [s.part for s in asked.result.support]
    for word in borrowed:
        assert not any(word in text for text in searched), (word, asked.describe())
        assert not any(word in part for part in judged), (word, asked.describe())
    assert question in asked.result.problem_text, asked.describe()


async def test_an_elliptical_follow_up_still_borrows_its_topic(ask: Asker) -> None:
    earlier = "县里的居民医保，去市里的大医院住院，自己先得掏多少才开始给报？"
    asked = await ask("那报的比例呢？", after(earlier))
    assert "医保" in asked.result.problem_text, asked.describe()


# --- a hedged fact in the question is still answered ------------------------------------------


@pytest.mark.parametrize(
    ("question", "amount"),
    [
        ("我爸85岁住青禾乡每月领多少？", "70元"),
        ("我妈81岁，户口在青禾乡，一个月能领多少钱？", "70元"),
        ("我奶奶92岁住青禾乡每月领多少？", "150元"),
    ],
    ids=["85", "81", "92"],
)
async def test_an_age_within_a_band_is_answered_with_that_bands_amount(ask: Asker, question: str, amount: str) -> None:
    # qinghe_elderly_allowance.md 第三条: 80周岁至89周岁的，每人每月70元；90周岁至99周岁的，每人每月150元.
    asked = await ask(question)
    assert asked.result.support and all(s.verified for s in asked.result.support), asked.describe()
    assert any(amount in q.sentence for q in asked.verified_quotes), asked.describe()


# --- confident misses: a verified verdict on the wrong sentence --------------------------------


@pytest.mark.parametrize(
    "question", ["青禾乡政府今年公车要花多少钱？", "青禾乡公车一年要花多少钱？"], ids=["this-year", "a-year"]
)
async def test_the_official_car_cost_is_not_another_figure(ask: Asker, question: str) -> None:
    # qinghe_budget_2026.md: 公务用车购置及运行维护费7.50万元; 政府采购预算总额为63.20万元; 共有车辆3辆.
    asked = await ask(question)
    assert not any("63.20万元" in q.sentence for q in asked.verified_quotes), asked.describe()
    if asked.verified:
        assert any("7.50万元" in q.sentence for q in asked.verified_quotes), asked.describe()


@pytest.mark.parametrize(
    "question", ["在县城中心商圈路边停车怎么收费？", "在人民路路边停车怎么收费？"], ids=["centre", "renmin-road"]
)
async def test_a_parking_fee_is_not_verified_by_the_zone_definition(ask: Asker, question: str) -> None:
    # yunling_parking_fee_rules.md 第三条 says which zone a street is in; 第四条 holds the prices.
    asked = await ask(question)
    for support in asked.verified:
        assert any(PRICE.search(q.sentence) for q in support.quotes), asked.describe()


@pytest.mark.parametrize(
    "question",
    ["白石镇和青禾乡的公务接待费各是多少？", "白石镇的公务接待费是多少？青禾乡的政府采购预算是多少？"],
    ids=["both-in-one", "one-each"],
)
async def test_a_part_about_one_town_never_quotes_the_other_towns_document(ask: Asker, question: str) -> None:
    asked = await ask(question)
    for support in asked.verified:
        named = {TOWN_DOCUMENTS[town] for town in TOWN_DOCUMENTS if town in support.part}
        if not named:
            continue
        quoted = {q.document_name for q in support.quotes}
        # Only the named towns' documents; and a part naming both quotes each of them.
        assert quoted & set(TOWN_DOCUMENTS.values()) == named, asked.describe()


@pytest.mark.parametrize(
    ("earlier", "fact"),
    [
        ("青禾乡今年的公务接待费是多少？", "公务接待费3.10万元"),
        ("青禾乡的乡村道路养护项目安排了多少钱？", "乡村道路养护项目98.75万元"),
    ],
    ids=["reception", "road-upkeep"],
)
async def test_an_elliptical_other_subject_gets_the_same_kind_of_fact(ask: Asker, earlier: str, fact: str) -> None:
    asked = await ask("那白石镇呢？", after(earlier))
    assert "白石" in asked.result.problem_text, asked.describe()
    if asked.verified:
        assert all(q.document_name == BAISHI for q in asked.verified_quotes), asked.describe()
        assert any(fact in q.sentence for q in asked.verified_quotes), asked.describe()


@pytest.mark.parametrize(
    ("earlier", "question"),
    [
        ((), "我想办残疾人证，要带什么材料？多久能办好？"),
        (("油烟机清洗一台多少钱？",), "我想办残疾人证，要带什么材料？多久能办好？"),
        (("我想办残疾人证，要带什么材料？",), "多久能办好？"),
    ],
    ids=["alone", "after-hood-cleaning", "follow-up"],
)
async def test_a_subject_no_document_covers_is_not_verified_by_a_general_rule(
    ask: Asker, earlier: tuple[str, ...], question: str
) -> None:
    # No sample document is on the disability card (残疾人证); the licensing rules' deadlines
    # for supplementing materials, or the library's card, are not its answer.
    asked = await ask(question, [m for q in earlier for m in after(q)])
    assert not asked.verified, asked.describe()
    assert not asked.result.sufficient, asked.describe()


# --- a disabled paragraph's fact is not stood in for by its neighbour's -------------------------


async def test_a_disabled_price_row_is_not_answered_with_the_row_beside_it(
    retrieval: RetrievalStubs, store: VectorStore, embedder: Embedder, unique: str
) -> None:
    dataset = (await retrieval.datasets.CreateDataset(pb.CreateDatasetRequest(name=f"locks-{unique}"))).dataset
    rows = pb.ParagraphList(
        paragraphs=[
            pb.ParagraphInput(title="开锁", content="开锁 80元"),
            pb.ParagraphInput(title="换锁芯", content="换锁芯 150元"),
        ]
    )
    request = pb.AddDocumentRequest(dataset_id=dataset.id, name="便民开锁价目表", paragraphs=rows)
    [document] = [e.document async for e in retrieval.documents.AddDocument(request) if e.HasField("document")]
    listed = await retrieval.paragraphs.ListParagraphs(
        pb.ListParagraphsRequest(dataset_id=dataset.id, document_id=document.id, page=1, page_size=10)
    )
    [lock_core] = [p for p in listed.paragraphs if p.title == "换锁芯"]
    await retrieval.paragraphs.UpdateParagraph(
        pb.UpdateParagraphRequest(
            dataset_id=dataset.id, document_id=document.id, paragraph_id=lock_core.id, enabled=False
        )
    )

    asked = await Asker(store, embedder, (dataset.id,))("换个锁芯多少钱？")
    contents = [e.hit.content for e in asked.result.evidence]
    assert "开锁 80元" in contents, "the enabled row is found, so the verdict on it is what is tested"
    assert not any("150" in c for c in contents), "a disabled paragraph is never retrieved"
    assert not asked.result.sufficient, asked.describe()
    assert not any("80元" in q.sentence for q in asked.verified_quotes), asked.describe()
    assert "150元" not in asked.answer
    assert "锁芯" in unverified_parts(asked.answer), asked.answer


# --- odd input and a long history -------------------------------------------------------------


@pytest.mark.parametrize("question", ["😀😀", "？？？"], ids=["emoji", "punctuation"])
async def test_a_question_without_words_ends_unverified(ask: Asker, question: str) -> None:
    asked = await ask(question)
    assert not asked.result.sufficient, asked.describe()
    assert not asked.verified, asked.describe()


async def test_an_english_question_over_chinese_documents_ends_in_a_result(ask: Asker) -> None:
    asked = await ask("How much does roadside parking cost in the county centre?")
    assert asked.answer.strip()


def earlier_questions(count: int, unlike: str) -> list[str]:
    """``count`` questions of the sample sets, none on ``unlike``'s topic."""
    questions: list[str] = []
    for name in ("questions.jsonl", "questions-hard.jsonl", "questions-shift.jsonl"):
        for line in (SAMPLES / name).read_text().splitlines():
            if line.strip():
                questions.extend(t["question"] for t in json.loads(line)["turns"] if unlike not in t["question"])
    assert len(questions) >= count
    return questions[:count]


async def test_a_complete_question_after_fifty_unrelated_ones_is_searched_as_asked(ask: Asker) -> None:
    question = "云岭县城区一类区域的道路停车泊位首小时收费多少钱？"
    history = [m for q in earlier_questions(50, "停车") for m in after(q)]
    asked = await ask(question, history)
    assert asked.result.problem_text == question, asked.describe()
    assert asked.answer.strip()


# --- a comparison gathers both sides ----------------------------------------------------------


async def test_a_comparison_gathers_the_figure_of_both_towns(ask: Asker) -> None:
    asked = await ask("白石跟青禾这俩地方，今年给村里修路补路各掏了多少钱？哪家掏得多？")
    evidence = "\n".join(e.hit.content for e in asked.result.evidence)
    assert "乡村道路养护项目98.75万元" in evidence, asked.describe()
    assert "乡村道路养护项目72.30万元" in evidence, asked.describe()
