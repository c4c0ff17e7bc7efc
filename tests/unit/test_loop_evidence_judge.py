"""The retrieval loop with an evidence judge beside a remote model, on scripted parts: which
rounds the judge decides without an assessment call, and when the model is still asked (it has
the last word before the loop gives up, and whenever the judge cannot decide)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import cast

from grpc_stubs.common.v1 import common_pb2
from kbcore.models.base import (
    ChatMessage,
    EvidenceJudge,
    EvidenceParagraph,
    ModelClient,
    ModelError,
    PartSupport,
    SupportQuote,
)
from services.retrieval.search.loop import (
    ASSESSMENT_FAILED,
    BY_JUDGE,
    Assessed,
    LoopLimits,
    LoopResult,
    RetrievalLoop,
)
from services.retrieval.store.base import Hit

QUESTION = "甲镇的预算是多少？乙乡的编制是多少？"
PARTS = ["甲镇的预算是多少？", "乙乡的编制是多少？"]


def hit(paragraph_id: str) -> Hit:
    return Hit(paragraph_id, "dataset", "doc", "文档", "", f"段落{paragraph_id}的内容。", 0, 1.0)


class ScriptedSearch:
    """Each query's hits from a table (new paragraphs per query unless the table says otherwise)."""

    def __init__(self, table: dict[str, list[str]] | None = None) -> None:
        self.table = table or {}
        self.queries: list[str] = []

    async def __call__(self, query: str) -> list[Hit]:
        self.queries.append(query)
        return [hit(p) for p in self.table.get(query, [f"p{len(self.queries)}"])]


class RemoteModel:
    """A remote model's auxiliary calls: each assessment answers the next scripted verdict."""

    model_name = "remote"
    is_offline = False

    def __init__(self, *verdicts: dict[str, object]) -> None:
        self.verdicts = list(verdicts)
        self.assessed = 0

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        return question

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        self.assessed += 1
        return json.dumps(self.verdicts.pop(0), ensure_ascii=False)


class ScriptedJudge:
    """Verifies every part once the evidence holds ``verified_from`` paragraphs; proposes
    ``queries`` (once each) while it does not; ``fails`` raises the embedder's failure."""

    def __init__(self, verified_from: int = 99, queries: Sequence[str] = (), fails: bool = False) -> None:
        self.verified_from = verified_from
        self.queries = list(queries)
        self.fails = fails
        self.judged = 0

    async def support(
        self, question: str, history: Sequence[ChatMessage], evidence: Sequence[EvidenceParagraph]
    ) -> list[PartSupport]:
        self.judged += 1
        if self.fails:
            raise ModelError("the embeddings endpoint is down")
        verified = len(evidence) >= self.verified_from
        quote = (SupportQuote(evidence[0].id, "文档", evidence[0].content, 1.0),) if evidence else ()
        return [PartSupport(part, quote, verified) for part in PARTS]

    async def part_queries(self, question: str, history: Sequence[ChatMessage]) -> list[str]:
        return list(PARTS)

    async def reading(self, question: str, rewrite: str, evidence: Sequence[EvidenceParagraph]) -> str:
        return rewrite

    async def verdict(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        queries = [q for q in self.queries if q not in searched]
        return json.dumps(
            {"sufficient": False, "missing": "缺少乙乡的编制", "queries": queries[:1]}, ensure_ascii=False
        )


def retrieval_loop(
    model: RemoteModel, search: ScriptedSearch, limits: LoopLimits, judge: EvidenceJudge | None = None
) -> RetrievalLoop:
    """The loop on the scripted model (which makes only the auxiliary calls the loop makes)."""
    return RetrievalLoop(cast(ModelClient, model), search, limits, judge=judge)


def run(loop: RetrievalLoop, question: str = QUESTION) -> tuple[list[object], LoopResult]:
    async def events() -> list[object]:
        return [event async for event in loop.run(question, [], True)]

    found = asyncio.run(events())
    result = found[-1]
    assert isinstance(result, LoopResult)
    return found[:-1], result


def test_a_compound_questions_parts_are_searched_beside_it_in_the_first_round() -> None:
    search = ScriptedSearch()
    _, result = run(retrieval_loop(RemoteModel(), search, LoopLimits(), judge=ScriptedJudge(verified_from=1)))
    assert result.rounds[0].queries == [QUESTION, *PARTS]
    assert search.queries[0] == QUESTION and sorted(search.queries) == sorted([QUESTION, *PARTS])


def test_without_a_judge_the_first_round_searches_the_question_whole_and_the_model_assesses() -> None:
    model = RemoteModel({"sufficient": True, "missing": "", "queries": []})
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits()))
    assert result.rounds[0].queries == [QUESTION]
    assert model.assessed == 1 and result.rounds[0].assessed_by == ""


def test_every_part_verified_is_sufficient_with_no_assessment_call_and_says_so() -> None:
    model = RemoteModel()
    events, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(), judge=ScriptedJudge(verified_from=1)))
    assert model.assessed == 0
    assert result.stop_reason == common_pb2.STOP_REASON_SUFFICIENT and result.sufficient
    assert (result.rounds[0].assessed_by, result.rounds[0].sufficient) == (BY_JUDGE, True)
    assert [(e.round, e.sufficient) for e in events if isinstance(e, Assessed)] == [(1, True)]
    assert result.support == [], "a remote model's answer gets no offline judgement"


def test_the_judges_follow_up_queries_are_searched_before_the_model_is_asked() -> None:
    model = RemoteModel()
    judge = ScriptedJudge(verified_from=4, queries=["乙乡 编制"])
    search = ScriptedSearch()
    _, result = run(retrieval_loop(model, search, LoopLimits(), judge=judge))
    first, second = result.rounds
    assert (first.assessed_by, first.sufficient, first.next_queries) == (BY_JUDGE, False, ["乙乡 编制"])
    assert first.missing == "缺少乙乡的编制"
    assert second.queries == ["乙乡 编制"] and second.assessed_by == BY_JUDGE and second.sufficient
    assert model.assessed == 0 and result.stop_reason == common_pb2.STOP_REASON_SUFFICIENT


def test_the_model_is_asked_when_the_judge_has_nothing_left_to_search() -> None:
    model = RemoteModel({"sufficient": False, "missing": "缺少乙乡的编制", "queries": []})
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(), judge=ScriptedJudge()))
    assert model.assessed == 1 and result.rounds[0].assessed_by == ""
    assert result.stop_reason == common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY and not result.sufficient


def test_the_model_can_overrule_a_strict_judge() -> None:
    model = RemoteModel({"sufficient": True, "missing": "", "queries": []})
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(), judge=ScriptedJudge()))
    assert model.assessed == 1 and result.sufficient and result.stop_reason == common_pb2.STOP_REASON_SUFFICIENT


def test_on_the_last_round_the_model_has_the_last_word_even_when_the_judge_has_queries() -> None:
    model = RemoteModel({"sufficient": False, "missing": "缺少乙乡的编制", "queries": ["乙乡 人员"]})
    judge = ScriptedJudge(queries=["乙乡 编制"])
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(max_rounds=2), judge=judge))
    assert [r.assessed_by for r in result.rounds] == [BY_JUDGE, ""]
    assert model.assessed == 1 and result.stop_reason == common_pb2.STOP_REASON_MAX_ROUNDS


def test_a_judge_led_round_that_adds_nothing_is_still_put_to_the_model() -> None:
    """The evidence the judge went on from was never assessed by the model: a round adding no
    paragraph asks it rather than keeping the judge's verdict."""
    model = RemoteModel({"sufficient": False, "missing": "缺少乙乡的编制", "queries": []})
    search = ScriptedSearch({"乙乡 编制": ["p1"]})
    _, result = run(retrieval_loop(model, search, LoopLimits(), judge=ScriptedJudge(queries=["乙乡 编制"])))
    assert model.assessed == 1
    assert not result.rounds[1].assessment_skipped and result.rounds[1].assessed_by == ""
    assert result.stop_reason == common_pb2.STOP_REASON_NO_NEW_EVIDENCE


def test_a_failing_judge_leaves_the_round_to_the_model() -> None:
    model = RemoteModel({"sufficient": True, "missing": "", "queries": []})
    judge = ScriptedJudge(verified_from=1, fails=True)
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(), judge=judge))
    assert judge.judged == 1 and model.assessed == 1 and result.sufficient
    assert result.rounds[0].assessed_by == ""


def test_a_judge_that_is_the_model_is_not_asked_twice_for_the_same_verdict() -> None:
    """The offline model judges its own rounds: an unverified part goes to its assessment, never
    to a second, identical verdict first (that would count one decision as two rounds' worth)."""

    class OfflineLike(RemoteModel, ScriptedJudge):
        def __init__(self) -> None:
            RemoteModel.__init__(self, {"sufficient": False, "missing": "缺少乙乡的编制", "queries": []})
            ScriptedJudge.__init__(self, queries=["乙乡 编制"])

    model = OfflineLike()
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(), judge=model))
    assert model.assessed == 1 and result.rounds[0].assessed_by == ""


class BrokenModel(RemoteModel):
    """A model whose assessment times out (``ModelError``) or answers what is not JSON."""

    def __init__(self, reply: str | None) -> None:
        super().__init__()
        self.reply = reply

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        self.assessed += 1
        if self.reply is None:
            raise ModelError("the model endpoint timed out")
        return self.reply


def test_a_last_word_that_fails_ends_the_loop_as_an_assessment_error_never_sufficient() -> None:
    for reply in (None, "这不是JSON"):
        model = BrokenModel(reply)
        judge = ScriptedJudge(queries=["乙乡 编制"])
        _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(max_rounds=2), judge=judge))
        assert model.assessed == 1, "the judge led round 1; the model was asked once, for round 2"
        assert result.stop_reason == common_pb2.STOP_REASON_ASSESSMENT_ERROR
        assert not result.sufficient and result.missing == ASSESSMENT_FAILED


def test_when_the_evidence_budget_is_spent_the_model_has_the_last_word() -> None:
    """No later round could add to the evidence: the judge's follow-ups could never be searched."""
    model = RemoteModel({"sufficient": False, "missing": "缺少乙乡的编制", "queries": []})
    judge = ScriptedJudge(queries=["乙乡 编制"])
    _, result = run(retrieval_loop(model, ScriptedSearch(), LoopLimits(max_paragraphs=2), judge=judge))
    assert model.assessed == 1 and result.rounds[0].assessed_by == ""
    assert result.stop_reason == common_pb2.STOP_REASON_EVIDENCE_BUDGET
