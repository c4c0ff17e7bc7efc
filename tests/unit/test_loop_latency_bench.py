"""The loop-latency bench's own arithmetic, on a clock that moves only when told: a profiled call
lasts its profile's duration with the offline model's time inside it, calls and tokens are
counted per kind, single-shot searches once and calls no model before generation, and the
loop's time to first answer token is its model calls plus the answer's first token."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.latency_profiles import ModelProfile
from bench.loop_latency import (
    ASSESS,
    GENERATE,
    REWRITE,
    CountedSearch,
    Measured,
    ProfiledModel,
    Tally,
    calls_and_tokens,
    loop_case,
    ratio,
    single_case,
    spread,
)
from bench.offline_answers import CaseOutcome
from kbcore.models.base import ChatMessage, EvidenceParagraph
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.models.prompts import ASSESS_SYSTEM, REWRITE_SYSTEM, assess_user_content, rewrite_user_content
from kbcore.text.tokens import count_tokens
from services.retrieval.store.base import Hit

PROFILE = ModelProfile("test", ttft=1.0, output_tps=20.0, prompt_tps=1000.0, assess_tokens=40, rewrite_tokens=10)
QUESTION = "图书馆几点开门？"
CONTENT = "图书馆周二至周日9:00至20:00开放。"
EVIDENCE = [EvidenceParagraph("p1", "云岭县图书馆借阅服务规则", "", CONTENT)]
HISTORY = [ChatMessage("user", "县图书馆在哪里？"), ChatMessage("assistant", "文化路12号")]
FOLLOW_UP = {
    "turns": [
        {"question": "县图书馆在哪里？", "answer_facts": ["文化路12号"]},
        {"question": "几点开门？", "gold": [{"must_contain": "9:00至20:00"}], "answer_facts": ["9:00至20:00"]},
    ]
}


class FakeTime:
    """A clock that moves by ``step`` at each reading (the work done between two readings) and
    by whatever is slept; the sleeps are recorded."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step
        self.slept: list[float] = []

    def clock(self) -> float:
        now = self.now
        self.now += self.step
        return now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def profiled(time: FakeTime, profile: ModelProfile = PROFILE) -> ProfiledModel:
    return ProfiledModel(None, profile, time.clock, time.sleep)


def assess_prompt(history: list[ChatMessage], searched: list[str]) -> int:
    return count_tokens(ASSESS_SYSTEM) + count_tokens(assess_user_content(QUESTION, history, EVIDENCE, searched))


def test_a_call_lasts_its_first_token_prompt_and_completion() -> None:
    assert PROFILE.duration(1000, 40) == 1.0 + 1.0 + 2.0
    assert PROFILE.first_token(500) == 1.5


def test_a_profiled_assessment_lasts_the_profile_and_keeps_the_offline_decision() -> None:
    time = FakeTime()
    verdict = asyncio.run(profiled(time).assess(QUESTION, [], EVIDENCE, [QUESTION]))
    assert verdict == asyncio.run(OfflineExtractiveModel().assess(QUESTION, [], EVIDENCE, [QUESTION]))
    assert time.now == PROFILE.duration(assess_prompt([], [QUESTION]), PROFILE.assess_tokens)


def test_the_offline_models_own_time_is_inside_the_duration_not_added() -> None:
    time = FakeTime(step=0.25)  # the call reads the clock before and after: 0.25 s of offline work
    asyncio.run(profiled(time).assess(QUESTION, [], EVIDENCE, [QUESTION]))
    duration = PROFILE.duration(assess_prompt([], [QUESTION]), PROFILE.assess_tokens)
    assert time.slept == [pytest.approx(duration - 0.25)]


def test_offline_work_longer_than_the_profile_is_counted_as_an_overrun() -> None:
    quick = ModelProfile("quick", ttft=0.1, output_tps=1e9, prompt_tps=1e9, assess_tokens=1, rewrite_tokens=1)
    time = FakeTime(step=1.0)
    model = profiled(time, quick)
    asyncio.run(model.assess(QUESTION, [], EVIDENCE, [QUESTION]))
    assert time.slept == []
    assert model.overruns == 1


def test_calls_and_tokens_are_counted_per_kind() -> None:
    model = profiled(FakeTime())

    async def calls() -> None:
        await model.rewrite(HISTORY, "几点开门？")
        await model.assess(QUESTION, HISTORY, EVIDENCE, [QUESTION])
        await model.assess(QUESTION, HISTORY, EVIDENCE, [QUESTION, "开放时间"])

    asyncio.run(calls())
    rewrite, assess = model.tallies[REWRITE], model.tallies[ASSESS]
    assert (rewrite.calls, rewrite.completion_tokens) == (1, PROFILE.rewrite_tokens)
    assert rewrite.prompt_tokens == count_tokens(REWRITE_SYSTEM) + count_tokens(
        rewrite_user_content(HISTORY, "几点开门？")
    )
    assert (assess.calls, assess.completion_tokens) == (2, 2 * PROFILE.assess_tokens)
    assert assess.prompt_tokens == assess_prompt(HISTORY, [QUESTION]) + assess_prompt(HISTORY, [QUESTION, "开放时间"])


def test_judgements_are_the_judges_and_made_once() -> None:
    judge = OfflineExtractiveModel()
    model = ProfiledModel(None, PROFILE, FakeTime().clock, FakeTime().sleep, judge)
    first = asyncio.run(judge.support(QUESTION, [], EVIDENCE))
    assert asyncio.run(model.support(QUESTION, [], EVIDENCE)) == first
    assert model.tallies[ASSESS].calls == 0, "a judgement is no call"


def library_search() -> CountedSearch:
    async def search(query: str) -> list[Hit]:
        return [Hit("p1", "d", "doc1", "云岭县图书馆借阅服务规则", "", CONTENT, 0, 1.0)]

    return CountedSearch(search)


def test_single_shot_searches_the_question_as_asked_once_and_calls_no_model_before_generation() -> None:
    time, search = FakeTime(), library_search()
    measured = asyncio.run(single_case((search, None), PROFILE, FOLLOW_UP, time.clock, time.sleep))
    assert search.queries == ["几点开门？"]
    assert time.slept == []
    assert measured.tallies[REWRITE].calls == measured.tallies[ASSESS].calls == 0
    generate = measured.tallies[GENERATE]
    assert generate.calls == 1
    assert measured.first_token == PROFILE.first_token(generate.prompt_tokens)
    assert measured.total == measured.first_token + generate.completion_tokens / PROFILE.output_tps
    assert measured.outcome.all_gold


@pytest.fixture
def slow_judgement(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    """Each judgement the offline model makes (not one it remembers) takes 0.5 s."""
    time = FakeTime()
    judge = OfflineExtractiveModel._judge

    async def slow(self: OfflineExtractiveModel, *args: Any) -> Any:
        time.now += 0.5
        return await judge(self, *args)

    monkeypatch.setattr(OfflineExtractiveModel, "_judge", slow)
    return time


def test_every_round_assessed_waits_for_its_model_calls_then_the_answers_first_token(
    slow_judgement: FakeTime,
) -> None:
    time, search = slow_judgement, library_search()
    measured = asyncio.run(loop_case((search, None), PROFILE, FOLLOW_UP, time.clock, time.sleep, judged=False))
    rewrite, assess = measured.tallies[REWRITE], measured.tallies[ASSESS]
    assert rewrite.calls == 1 and assess.calls >= 1
    assert measured.first_progress == rewrite.seconds  # a follow-up's first event waits for its rewrite
    # The judgement inside an assessment is the call's own time; the final one is remembered.
    assert measured.retrieval == pytest.approx(rewrite.seconds + assess.seconds)
    assert measured.overruns == 0
    generate = measured.tallies[GENERATE]
    assert measured.first_token == pytest.approx(measured.retrieval + PROFILE.first_token(generate.prompt_tokens))


def test_the_judges_work_is_counted_in_full_and_spares_the_assessment_it_decides(slow_judgement: FakeTime) -> None:
    time, search = slow_judgement, library_search()
    case = {"turns": [{"question": "图书馆开放时间是几点？", "gold": [{"must_contain": "9:00至20:00"}]}]}
    measured = asyncio.run(loop_case((search, None), PROFILE, case, time.clock, time.sleep))
    assert measured.tallies[ASSESS].calls == 0, "the judge verified the opening hours: no assessment call"
    assert measured.retrieval == pytest.approx(0.5)  # one judgement, the final one remembered
    assert measured.first_progress == 0.0 and measured.outcome.all_gold


def case_timed(first_token: float, tallies: dict[str, Tally] | None = None) -> Measured:
    outcome = CaseOutcome(1, 1, 1, [], 0, 0, 1, 1, 0.0)
    return Measured(outcome, 0.0, 0.0, first_token, first_token, tallies or {})


def test_p50_is_the_median_and_p95_a_measured_value() -> None:
    # Nearest rank: p95 of 30 samples is the 29th (0.95 × 30 = 28.5, rounded up).
    assert spread([float(n) for n in range(30, 0, -1)]) == (15.5, 29.0)


def test_the_ratio_is_loop_over_single_shot_at_the_median() -> None:
    loop = [case_timed(3.0), case_timed(5.0), case_timed(4.0)]
    single = [case_timed(1.0), case_timed(2.0), case_timed(2.0)]
    assert ratio(loop, single) == 2.0


def test_calls_and_tokens_are_means_per_question_leaving_out_kinds_never_called() -> None:
    def tallies(assessments: int) -> dict[str, Any]:
        return {
            REWRITE: Tally(),
            ASSESS: Tally(assessments, 1000 * assessments, 40 * assessments),
            GENERATE: Tally(1, 500, 100),
        }

    text = calls_and_tokens([case_timed(1.0, tallies(1)), case_timed(1.0, tallies(2))])
    assert text == "2.50 calls, 2,000 + 160 tokens (assess 1.50 × (1,500 + 60) · generate 1.00 × (500 + 100))"
