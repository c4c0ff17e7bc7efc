"""The retrieval loop, case by case (one per stop reason and more), against the real vector store
with the sample knowledge base; the assessment comes from a scripted OpenAI-protocol server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from grpc_stubs.common.v1 import common_pb2
from kbcore.models.base import ChatMessage
from services.retrieval.search.loop import Assessed, LoopLimits, LoopResult, RetrievalLoop, Retrieving
from services.retrieval.search.query import Searcher, SearchSettings
from services.retrieval.store.base import Hit
from tests.fakes.openai_server import ChatReply, FakeOpenAI, request_kind
from tests.harness import Stack
from tools.seed_demo import DEMO_DATASET_ID

BUDGET_Q = "青禾乡2026年的项目支出预算是多少万元？"
EXPENSE_Q = "星澜科技规定员工应当在费用发生后多少日内提交报销申请？"


def verdict(sufficient: Any, missing: str = "", queries: list[str] | None = None) -> ChatReply:
    return ChatReply(
        content=json.dumps({"sufficient": sufficient, "missing": missing, "queries": queries or []}, ensure_ascii=False)
    )


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


class CountingSearch:
    """The real search, counting what reaches the vector store."""

    def __init__(self, stack: Stack, store, embedder, settings: SearchSettings | None = None) -> None:
        self.searcher = Searcher(store, embedder)
        self.settings = settings or SearchSettings(top_n=3)
        self.queries: list[str] = []

    async def __call__(self, query: str) -> list[Hit]:
        self.queries.append(query)
        return await self.searcher.search((DEMO_DATASET_ID,), query, self.settings)


async def run(loop: RetrievalLoop, question: str, history: list[ChatMessage] | None = None, *, datasets: bool = True):
    events = [e async for e in loop.run(question, history or [], datasets)]
    result = events[-1]
    assert isinstance(result, LoopResult)
    return events[:-1], result


@pytest.fixture
def search(stack: Stack, store, embedder) -> CountingSearch:
    return CountingSearch(stack, store, embedder)


async def test_insufficient_evidence_triggers_a_second_round_without_repeating_paragraphs(model, fake, search) -> None:
    fake.enqueue(verdict(False, "缺少报销期限", [EXPENSE_Q]), verdict(True))
    events, result = await run(RetrievalLoop(model, search, LoopLimits()), BUDGET_Q)
    assert result.stop_reason == common_pb2.STOP_REASON_SUFFICIENT and result.sufficient
    assert [r.round for r in result.rounds] == [1, 2]
    assert result.rounds[0].next_queries == [EXPENSE_Q] and result.rounds[1].queries == [EXPENSE_Q]
    ids = [e.hit.id for e in result.evidence]
    assert len(ids) == len(set(ids)), "paragraphs are de-duplicated by id across rounds"
    assert set(result.rounds[0].new_paragraph_ids).isdisjoint(result.rounds[1].new_paragraph_ids)
    assert any("费用发生之日起60日内" in e.hit.content for e in result.evidence if e.round == 2)
    assert [type(e).__name__ for e in events] == ["Retrieving", "Assessed", "Retrieving", "Assessed"]


async def test_a_repeated_query_never_reaches_the_store(model, fake, search) -> None:
    fake.enqueue(verdict(False, "仍缺", [" 青禾乡2026年的项目支出预算，是多少万元 "]))
    _, result = await run(RetrievalLoop(model, search, LoopLimits()), BUDGET_Q)
    assert result.stop_reason == common_pb2.STOP_REASON_DUPLICATE_QUERY
    assert search.queries == [BUDGET_Q], "the normalised duplicate was not searched"
    assert len(result.rounds) == 1


async def test_no_new_evidence_stops_the_loop_without_asking_the_model_again(model, fake, search) -> None:
    """A round that adds nothing leaves the evidence as the last assessment judged it: the verdict
    stands, no model call is made for it, and the trace says so."""
    asked_before = sum(request_kind(body) == "assess" for body in fake.chat_bodies)
    fake.enqueue(verdict(False, "缺少青禾乡的预算", ["青禾乡 2026 项目支出 预算 万元"]))
    events, result = await run(RetrievalLoop(model, search, LoopLimits()), BUDGET_Q)
    assert result.stop_reason == common_pb2.STOP_REASON_NO_NEW_EVIDENCE
    assert result.rounds[1].new_paragraph_ids == [] and len(search.queries) == 2
    assert sum(request_kind(body) == "assess" for body in fake.chat_bodies) - asked_before == 1
    skipped = result.rounds[1]
    assert skipped.assessment_skipped and not result.rounds[0].assessment_skipped
    assert (skipped.sufficient, skipped.missing, skipped.next_queries) == (False, "缺少青禾乡的预算", [])
    assert [e.round for e in events if isinstance(e, Assessed)] == [1], "no progress claims an assessment of round 2"


async def test_empty_evidence_is_never_sufficient(model, fake, stack, store, embedder) -> None:
    from services.retrieval.store.base import SearchMode

    nothing = CountingSearch(stack, store, embedder, SearchSettings(top_n=3, mode=SearchMode.KEYWORD))
    fake.enqueue(verdict(True))
    _, result = await run(RetrievalLoop(model, nothing, LoopLimits()), "zzqqxx")
    assert result.evidence == []
    assert result.sufficient is False and result.stop_reason == common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY


@pytest.mark.parametrize("reply", [ChatReply(content="sure, it is sufficient"), verdict("yes"), ChatReply.error(500)])
async def test_an_invalid_or_failed_assessment_is_assessment_error(model, fake, search, reply: ChatReply) -> None:
    fake.enqueue(reply)
    _, result = await run(RetrievalLoop(model, search, LoopLimits()), BUDGET_Q)
    assert result.stop_reason == common_pb2.STOP_REASON_ASSESSMENT_ERROR and result.sufficient is False
    assert result.rounds[0].sufficient is False and "评估失败" in result.missing
    assert result.evidence, "the evidence found so far is kept for the answer"


@pytest.mark.parametrize("max_rounds", [1, 3])
async def test_the_round_limit_holds(model, fake, search, max_rounds: int) -> None:
    fake.enqueue(*(verdict(False, "缺", [f"查询{i} 年休假 病假 婚假"]) for i in range(6)))
    _, result = await run(RetrievalLoop(model, search, LoopLimits(max_rounds=max_rounds)), BUDGET_Q)
    assert len(result.rounds) == max_rounds
    assert result.stop_reason in (common_pb2.STOP_REASON_MAX_ROUNDS, common_pb2.STOP_REASON_NO_NEW_EVIDENCE)
    if max_rounds == 1:
        assert result.stop_reason == common_pb2.STOP_REASON_MAX_ROUNDS


async def test_no_datasets_means_no_model_call_at_all(model, fake, search) -> None:
    events, result = await run(
        RetrievalLoop(model, search, LoopLimits()), BUDGET_Q, [ChatMessage("user", "之前的问题")], datasets=False
    )
    assert result.stop_reason == common_pb2.STOP_REASON_NO_DATASETS and not result.sufficient
    assert events == [] and search.queries == []
    assert fake.chat_bodies == [], "neither rewrite nor assessment was called"


async def test_the_evidence_budget_stops_the_loop(model, fake, search) -> None:
    search.settings = SearchSettings(top_n=20, similarity=0.0)
    fake.enqueue(verdict(False, "缺", [EXPENSE_Q]))
    _, result = await run(RetrievalLoop(model, search, LoopLimits(evidence_tokens=1000)), BUDGET_Q)
    assert result.stop_reason == common_pb2.STOP_REASON_EVIDENCE_BUDGET
    assert 0 < len(result.evidence) < 20


async def test_two_follow_up_queries_are_searched_in_one_round(model, fake, search) -> None:
    fake.enqueue(verdict(False, "缺两项", [EXPENSE_Q, "云岭县图书馆成人读者证借期", "第三个被丢弃"]), verdict(True))
    events, result = await run(RetrievalLoop(model, search, LoopLimits()), BUDGET_Q)
    round_two = [q for e in events if isinstance(e, Retrieving) and e.round == 2 for q in e.queries]
    assert round_two == [EXPENSE_Q, "云岭县图书馆成人读者证借期"]
    assert result.rounds[1].queries == round_two
    assert any(isinstance(e, Assessed) and e.round == 2 and e.sufficient for e in events)


async def test_history_is_rewritten_and_a_failed_rewrite_falls_back_to_the_question(model, fake, search) -> None:
    history = [ChatMessage("user", "云岭县行政许可多少个工作日内作出决定？"), ChatMessage("assistant", "18个工作日。")]
    fake.enqueue(ChatReply(content="云岭县行政许可决定期限可以延长多久？"), verdict(True))
    _, result = await run(RetrievalLoop(model, search, LoopLimits()), "可以延长多久？", history)
    assert result.problem_text == "云岭县行政许可决定期限可以延长多久？"
    assert search.queries[0] == result.problem_text
    assert [request_kind(b) for b in fake.chat_bodies] == ["rewrite", "assess"]

    fake.reset()
    search.queries.clear()
    fake.enqueue(ChatReply(content="被截断的改", finish_reason="length"), verdict(True))
    _, result = await run(RetrievalLoop(model, search, LoopLimits()), "可以延长多久？", history)
    assert result.problem_text == "可以延长多久？", "a truncated rewrite is an error, never a rewrite"
    assert result.rewrite_error
