"""The retrieval loop's quality and latency under realistic model timings, beside single-shot
retrieval on the same timings: the baseline for making the loop faster.

In-process on the sample knowledge base, as ``offline_answers`` runs it (hybrid top 5, ≤ 3
rounds). The offline model decides, and ``ProfiledModel`` gives each rewrite and assessment the
duration a real model would take (``latency_profiles``: a DeepSeek-like hosted API and a ~7B
model on a local GPU): it sleeps the rest of the profile's duration after the offline call, so
the offline model's own time is inside the duration, not added to it. The searches are real.

Two loops: as deployed (the evidence judge checks each round first, as the retrieval service
does for a remote model: a compound question's parts searched in the first round, no
assessment call when every part is verified; its work is local and counted in full), and with
every round assessed by the model (the loop before the judge, for comparison).

Per case:

- time to first progress: from the loop's start to its first event (after the rewrite, for a
  follow-up);
- time to first answer token: the loop's end, plus the generation call's first token for a
  prompt built as the chat service builds it (``build_messages``: question, history, evidence);
  the offline model's final ``support`` step repeats the last judgement, remembered, so it
  costs nothing to take out;
- total: first answer token plus the offline answer's tokens at the profile's output speed;
- model calls and tokens per kind (rewrite, assess, generate), prompt tokens counted on the
  text each call sends with ``count_tokens``, completion tokens from the profile (the answer's
  from the offline answer);
- all gold and facts in the answer, graded as ``offline_answers`` grades them.

Single-shot: one search with the question as asked (no rewrite, no assessment), then the same
generation step. The headline is dev-hard's compound questions, the loop's reason to exist. Its cases run one after the other, alone: they have no sleeps, so all their
time is CPU and anything running beside them would lengthen it. The loop's cases run eight at a
time (``CONCURRENCY``): each waits seconds on its sleeps and spends about 0.1 s of CPU, so
the CPU is busy about a quarter of the time (a row shows the share measured) and a case rarely
waits for another's; each case is timed on its own clock readings. The offline model's CPU
work waits inside the sleeps, where a delay changes nothing unless it outlasts the profile's
duration (counted in a row that must read 0); only the searches could be lengthened, by tens of
milliseconds against seconds (the "search and the rest" share of the loop's time shows it).
Eight at a time keeps the section near two minutes, the knowledge base's loading included.

``python -m bench.loop_latency`` runs this section alone. ``run()`` returns the rows and, as raw
data, per profile, set and pipeline the samples of time to first answer token and total.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bench.kb_fixture import load_sample_kb
from bench.latency_profiles import PROFILES, ModelProfile
from bench.offline_answers import (
    LIMITS,
    SETS,
    CaseOutcome,
    answer_text,
    graded,
    history_of,
    load,
    offline_search,
)
from bench.table import Row, median, percentile, run_alone
from grpc_stubs.common.v1 import common_pb2
from kbcore.models.base import ChatMessage, EvidenceMatcher, EvidenceParagraph, PartSupport
from kbcore.models.offline.model import OfflineExtractiveModel
from kbcore.models.prompts import ASSESS_SYSTEM, REWRITE_SYSTEM, assess_user_content, rewrite_user_content
from kbcore.models.usage_estimate import estimate_usage
from kbcore.vocabulary import STOP_REASON
from services.chat.answering.prompt import build_messages
from services.retrieval.search.loop import (
    NOT_ASSESSED,
    Evidence,
    LoopResult,
    RetrievalLoop,
    RoundTrace,
    SearchFn,
    as_model_evidence,
)
from services.retrieval.store.base import Hit

SECTION = "loop_latency"
SET_NAMES = ("dev", "dev-hard")
CONCURRENCY = 8
HEADLINE = ("deepseek", "dev-hard")  # the profile and set the loop's speed-up is judged on
HEADLINE_KIND = "compound"  # ... on its questions of this kind
TARGET_RATIO = 1.5  # loop / single-shot, p50 time to first answer token
LOOP, EVERY_ROUND, SINGLE = "loop", "loop, every round assessed", "single-shot"
REWRITE, ASSESS, GENERATE = "rewrite", "assess", "generate"
KINDS = (REWRITE, ASSESS, GENERATE)

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]
Parts = tuple[SearchFn, EvidenceMatcher | None]
Results = dict[tuple[str, str, str], list["Measured"]]  # (profile, set, pipeline) → its cases
T = TypeVar("T")


@dataclass
class Tally:
    """The calls of one kind: how many, their tokens, and the seconds the profile gave them."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def add(self, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.seconds += seconds


def prompt_tokens(system: str, user: str) -> int:
    """A two-message call's prompt tokens, counted as the model client's estimate counts them."""
    return estimate_usage([ChatMessage("system", system), ChatMessage("user", user)], "").prompt_tokens


class ProfiledModel(OfflineExtractiveModel):
    """The offline model's decisions on a real model's timings.

    Each rewrite and assessment lasts the profile's duration for its prompt and completion
    tokens: after the offline call, the rest of that duration is slept (on ``sleep``, read on
    ``clock``, both replaceable so a test can check it without waiting). Its judgements are
    ``judge``'s when one is given (the evidence judge beside it, whose local work is no call and
    is counted as it is): the final ``support``, which only the offline model takes, then
    repeats a remembered judgement instead of adding offline-only work to the loop's time."""

    def __init__(
        self,
        matcher: EvidenceMatcher | None,
        profile: ModelProfile,
        clock: Clock = time.perf_counter,
        sleep: Sleep = asyncio.sleep,
        judge: OfflineExtractiveModel | None = None,
    ) -> None:
        super().__init__(matcher=matcher)
        self.judge = judge
        self.profile = profile
        self.tallies = {REWRITE: Tally(), ASSESS: Tally()}
        self.overruns = 0  # calls whose offline work took longer than the profile's duration
        self._clock = clock
        self._sleep = sleep

    async def _profiled(
        self, kind: str, completion_tokens: int, prompt: Callable[[], int], call: Callable[[], Awaitable[T]]
    ) -> T:
        started = self._clock()
        tokens = prompt()  # counted inside the duration too: the bench's work, not the model's
        result = await call()
        duration = self.profile.duration(tokens, completion_tokens)
        remaining = duration - (self._clock() - started)
        if remaining > 0:
            await self._sleep(remaining)
        else:
            self.overruns += 1
        self.tallies[kind].add(tokens, completion_tokens, duration)
        return result

    async def support(
        self, question: str, history: Sequence[ChatMessage], evidence: Sequence[EvidenceParagraph]
    ) -> list[PartSupport]:
        if self.judge is not None:
            return await self.judge.support(question, history, evidence)
        return await super().support(question, history, evidence)

    async def rewrite(self, history: Sequence[ChatMessage], question: str) -> str:
        return await self._profiled(
            REWRITE,
            self.profile.rewrite_tokens,
            lambda: prompt_tokens(REWRITE_SYSTEM, rewrite_user_content(history, question)),
            lambda: super(ProfiledModel, self).rewrite(history, question),
        )

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        return await self._profiled(
            ASSESS,
            self.profile.assess_tokens,
            lambda: prompt_tokens(ASSESS_SYSTEM, assess_user_content(question, history, evidence, searched)),
            lambda: super(ProfiledModel, self).assess(question, history, evidence, searched),
        )


class CountedSearch:
    """A search function that counts its calls (single-shot must make exactly one)."""

    def __init__(self, search: SearchFn) -> None:
        self._search = search
        self.queries: list[str] = []

    async def __call__(self, query: str) -> list[Hit]:
        self.queries.append(query)
        return await self._search(query)


@dataclass
class Measured:
    """One case through one pipeline on one profile (seconds from the pipeline's start)."""

    outcome: CaseOutcome
    first_progress: float
    retrieval: float  # the loop's end (single-shot: the search's)
    first_token: float
    total: float
    tallies: dict[str, Tally] = field(default_factory=dict)
    overruns: int = 0


def measured(
    case: dict[str, Any],
    profile: ModelProfile,
    model: ProfiledModel,
    result: LoopResult,
    first_progress: float,
    retrieval: float,
) -> Measured:
    """The generation step after retrieval (its prompt as the chat service builds it, its
    answer the offline one), the timings it gives, and the case graded."""
    question = case["turns"][-1]["question"]
    answer = answer_text(question, result)
    messages = build_messages(
        question=question,
        evidence=as_model_evidence(result.evidence),
        history=history_of(case["turns"][:-1]),
        sufficient=result.sufficient,
        stop_reason=STOP_REASON.name(result.stop_reason),
        missing=result.missing,
    )
    usage = estimate_usage(messages, answer)
    first_token = retrieval + profile.first_token(usage.prompt_tokens)
    generate = Tally()
    generate.add(
        usage.prompt_tokens, usage.completion_tokens, profile.duration(usage.prompt_tokens, usage.completion_tokens)
    )
    outcome = graded(case, result, answer, 0.0)
    outcome.kind = case.get("kind", "")
    return Measured(
        outcome=outcome,
        first_progress=first_progress,
        retrieval=retrieval,
        first_token=first_token,
        total=first_token + usage.completion_tokens / profile.output_tps,
        tallies={**model.tallies, GENERATE: generate},
        overruns=model.overruns,
    )


async def loop_case(
    parts: Parts,
    profile: ModelProfile,
    case: dict[str, Any],
    clock: Clock = time.perf_counter,
    sleep: Sleep = asyncio.sleep,
    judged: bool = True,
) -> Measured:
    """The case's last turn through the loop (its earlier turns as history); ``judged``: the
    evidence judge checks each round first (as deployed), else the model assesses every round."""
    search, matcher = parts
    # The deployed judge is a model of its own beside the remote one, unprofiled: local work.
    judge = OfflineExtractiveModel(matcher=matcher) if judged else None
    model = ProfiledModel(matcher, profile, clock, sleep, judge)
    loop = RetrievalLoop(model, search, LIMITS, judge=judge)
    turn = case["turns"][-1]
    started = clock()
    first_progress: float | None = None
    result: object = None
    events: AsyncIterator[object] = loop.run(turn["question"], history_of(case["turns"][:-1]), True)
    async for event in events:
        if first_progress is None:
            first_progress = clock() - started
        result = event
    retrieval = clock() - started
    assert isinstance(result, LoopResult) and first_progress is not None
    return measured(case, profile, model, result, first_progress, retrieval)


async def single_case(
    parts: Parts,
    profile: ModelProfile,
    case: dict[str, Any],
    clock: Clock = time.perf_counter,
    sleep: Sleep = asyncio.sleep,
) -> Measured:
    """The case's last turn searched once as asked, its hits handed to generation as they are."""
    search, matcher = parts
    model = ProfiledModel(matcher, profile, clock, sleep)
    turn = case["turns"][-1]
    question, history = turn["question"], history_of(case["turns"][:-1])
    started = clock()
    first_progress = clock() - started  # the search starts at once: its progress event could go now
    hits = await search(question)
    retrieval = clock() - started
    evidence = [Evidence(hit, 1) for hit in {hit.id: hit for hit in hits}.values()]
    # The offline answer quotes what ``support`` judged; the loop takes this step after its rounds.
    support = await model.support(question, history, as_model_evidence(evidence)) if evidence else []
    result = LoopResult(
        problem_text=question,
        evidence=evidence,
        rounds=[RoundTrace(1, [question], [e.hit.id for e in evidence], len(evidence))],
        stop_reason=common_pb2.STOP_REASON_MAX_ROUNDS,
        sufficient=False,
        missing=NOT_ASSESSED,
        run_time=retrieval,
        support=support,
    )
    return measured(case, profile, model, result, first_progress, retrieval)


def spread(samples: Sequence[float]) -> tuple[float, float]:
    """p50 (the median) and p95 (nearest rank: a value that was measured)."""
    return median(samples), percentile(samples, 0.95)


def ratio(loop: Sequence[Measured], single: Sequence[Measured]) -> float:
    """Loop over single-shot, p50 time to first answer token."""
    return median([m.first_token for m in loop]) / median([m.first_token for m in single])


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def calls_and_tokens(cases: Sequence[Measured]) -> str:
    """Mean per question: calls, then prompt + completion tokens, in all and per kind that was called."""
    n = len(cases)
    means = {
        kind: (
            sum(m.tallies[kind].calls for m in cases) / n,
            sum(m.tallies[kind].prompt_tokens for m in cases) / n,
            sum(m.tallies[kind].completion_tokens for m in cases) / n,
        )
        for kind in KINDS
    }
    calls, prompt, completion = (sum(means[kind][i] for kind in KINDS) for i in range(3))
    kinds = " · ".join(f"{kind} {c:.2f} × ({p:,.0f} + {t:,.0f})" for kind, (c, p, t) in means.items() if c)
    return f"{calls:.2f} calls, {prompt:,.0f} + {completion:,.0f} tokens ({kinds})"


def quality(cases: Sequence[Measured]) -> str:
    gold = sum(m.outcome.all_gold for m in cases)
    facts = sum(len(m.outcome.facts) for m in cases)
    found = sum(m.outcome.facts_found for m in cases)
    return f"{gold}/{len(cases)} · {found}/{facts} ({found / max(facts, 1):.0%})"


def pipeline_rows(label: str, cases: Sequence[Measured]) -> list[Row]:
    first, first_95 = spread([m.first_token for m in cases])
    total, total_95 = spread([m.total for m in cases])
    progress, progress_95 = spread([m.first_progress for m in cases])
    return [
        Row(
            SECTION,
            f"{label}: first answer token p50 / p95 · total p50 / p95 · first progress p50 / p95",
            f"{seconds(first)} / {seconds(first_95)} · {seconds(total)} / {seconds(total_95)}"
            f" · {seconds(progress)} / {seconds(progress_95)}",
        ),
        Row(SECTION, f"{label}: all gold · facts in the answer", quality(cases)),
        Row(
            SECTION, f"{label}: model calls and prompt + completion tokens per question (mean)", calls_and_tokens(cases)
        ),
    ]


def where_time_goes(cases: Sequence[Measured]) -> str:
    """The loop's mean total split in its parts, in the order they happen."""
    n = len(cases)
    rewrite = sum(m.tallies[REWRITE].seconds for m in cases) / n
    assess = sum(m.tallies[ASSESS].seconds for m in cases) / n
    retrieval = sum(m.retrieval for m in cases) / n
    first = sum(m.first_token - m.retrieval for m in cases) / n
    stream = sum(m.total - m.first_token for m in cases) / n
    return (
        f"rewrite {seconds(rewrite)} · assessments {seconds(assess)} · search and the rest"
        f" {seconds(retrieval - rewrite - assess)} · answer's first token {seconds(first)}"
        f" · answer's stream {seconds(stream)} (total {seconds(retrieval + first + stream)})"
    )


def of_kind(cases: Sequence[Measured], kind: str) -> list[Measured]:
    return [m for m in cases if m.outcome.kind == kind]


def ratio_row(label: str, loop: Sequence[Measured], single: Sequence[Measured], headline: bool) -> Row:
    value = ratio(loop, single)
    return Row(
        SECTION,
        f"{label}: p50 time to first answer token / single-shot's",
        f"{value:.2f}",
        f"≤ {TARGET_RATIO}" if headline else "",
        value <= TARGET_RATIO if headline else None,
    )


def set_rows(profile: str, name: str, results: Results) -> list[Row]:
    """One profile and set: each pipeline's figures, the loops against single-shot, and the
    headline kind's own ratio and quality (the loop as deployed)."""
    loop, every = results[(profile, name, LOOP)], results[(profile, name, EVERY_ROUND)]
    single = results[(profile, name, SINGLE)]
    prefix = f"{profile} · {name} ({len(loop)} cases)"
    rows = pipeline_rows(f"{prefix} · {LOOP}", loop)
    rows += pipeline_rows(f"{prefix} · {EVERY_ROUND}", every)
    rows += pipeline_rows(f"{prefix} · {SINGLE}", single)
    rows.append(ratio_row(f"{prefix} · {LOOP}", loop, single, False))
    rows.append(ratio_row(f"{prefix} · {EVERY_ROUND}", every, single, False))
    kind = (of_kind(loop, HEADLINE_KIND), of_kind(every, HEADLINE_KIND), of_kind(single, HEADLINE_KIND))
    if all(kind):
        label = f"{profile} · {name}, {HEADLINE_KIND} questions ({len(kind[0])})"
        headline = (profile, name) == HEADLINE
        rows.append(ratio_row(f"{label} · {LOOP}", kind[0], kind[2], headline))
        rows.append(ratio_row(f"{label} · {EVERY_ROUND}", kind[1], kind[2], False))
        rows += [
            Row(SECTION, f"{label} · {pipeline}: all gold · facts in the answer", quality(cases))
            for pipeline, cases in zip((LOOP, EVERY_ROUND, SINGLE), kind, strict=True)
        ]
    rows.append(Row(SECTION, f"{prefix} · {LOOP}: where the time goes (mean)", where_time_goes(loop)))
    return rows


def rows_of(results: Results) -> list[Row]:
    rows: list[Row] = []
    for profile in PROFILES:
        for name in SET_NAMES:
            rows += set_rows(profile.name, name, results)
        overruns = sum(m.overruns for key, cases in results.items() if key[0] == profile.name for m in cases)
        rows.append(
            Row(
                SECTION,
                f"{profile.name}: model calls whose offline work outlasted the profile (must be 0)",
                str(overruns),
            )
        )
    return rows


async def measure(store: Any, embedder: Any, dataset_id: str) -> tuple[Results, float]:
    """Every profile × set × pipeline, a fresh search (and query-embedding cache) for each; and
    the share of one core this process kept busy while the loop's cases ran side by side."""
    cases = {name: load(SETS[name]) for name in SET_NAMES}
    results: Results = {}
    await single_case(offline_search(store, embedder, dataset_id), PROFILES[0], cases[SET_NAMES[0]][0])  # warm-up
    for profile in PROFILES:
        parts = offline_search(store, embedder, dataset_id)
        for name in SET_NAMES:
            results[(profile.name, name, SINGLE)] = [await single_case(parts, profile, case) for case in cases[name]]
    gate = asyncio.Semaphore(CONCURRENCY)

    async def bounded(parts: Parts, profile: ModelProfile, case: dict[str, Any], judged: bool) -> Measured:
        async with gate:
            return await loop_case(parts, profile, case, judged=judged)

    jobs: dict[tuple[str, str, str], list[Awaitable[Measured]]] = {}
    for profile in PROFILES:
        for pipeline in (LOOP, EVERY_ROUND):
            parts = offline_search(store, embedder, dataset_id)
            for name in SET_NAMES:
                jobs[(profile.name, name, pipeline)] = [
                    bounded(parts, profile, case, pipeline == LOOP) for case in cases[name]
                ]
    cpu, wall = time.process_time(), time.perf_counter()
    done = await asyncio.gather(*(asyncio.gather(*batch) for batch in jobs.values()))
    busy = (time.process_time() - cpu) / (time.perf_counter() - wall)
    results.update(zip(jobs, (list(batch) for batch in done), strict=True))
    return results, busy


async def run() -> tuple[list[Row], dict[str, Any]]:
    kb = await load_sample_kb()
    try:
        results, busy = await measure(kb.store, kb.embedder, kb.dataset_id)
    finally:
        await kb.store.close()
    raw = {
        f"{profile} · {name} · {pipeline}": {
            "first_token": [m.first_token for m in cases],
            "total": [m.total for m in cases],
        }
        for (profile, name, pipeline), cases in results.items()
    }
    busy_row = Row(
        SECTION,
        f"loop cases, {CONCURRENCY} at a time: CPU time / wall time of this process (1 = one core busy)",
        f"{busy:.2f}",
    )
    return [*rows_of(results), busy_row], raw


if __name__ == "__main__":
    run_alone(run)
