"""Which evidence sentences answer which question part: shared words, and meaning when known.

People ask in their own words (公车 for 公务用车), so shared words alone miss most answers.
The retrieval service, which owns the embedder, supplies each part's cosine to each evidence
paragraph. e5 cosines cluster high (unrelated Chinese ≈ 0.8) and vary from part to part, so a
paragraph is judged by how far it stands out, *for that part*, from the other retrieved
paragraphs of its own document (other documents' paragraphs are no reference: beside them any
paragraph of the right document stands out, answer or not), helped by the words it shares,
never by an absolute threshold.

Measured on the sample documents, a paraphrased part's answer often stands out by no more than
the nearest paragraph of a part with no answer in the knowledge base does (both ≈ 0.005-0.02),
so meaning alone cannot say "verified" there. Three outcomes follow:
*verified* (the words cover the part, or its best paragraph stands out clearly), *nearest*
(the closest evidence is quoted, and the part is still named unverifiable), or nothing.
Only verified parts make the evidence sufficient.
"""

from __future__ import annotations

import difflib
import itertools
import statistics
from collections.abc import Sequence
from dataclasses import replace

from kbcore.models.base import PartSupport, SupportQuote
from kbcore.models.offline.answer_kinds import AnswerKind, asked_kinds, carries, carries_any
from kbcore.models.offline.answering import (
    Affinity,
    about_what_is_asked,
    answering_sentences,
    characters,
    decisive,
    rarity,
)
from kbcore.models.offline.evidence import (
    COVER_THRESHOLD,
    Need,
    Passage,
    is_instruction,
    paragraph_share,
    plausible,
    sentence_score,
    sentences,
    words_shared,
)
from kbcore.models.offline.followup import sibling
from kbcore.models.offline.question_parts import asks_each
from kbcore.models.offline.terms import contains, leading_name, match_credit, normalise

# Margin over the median score of its document's other paragraphs that verifies a paragraph by
# meaning: above the nearest paragraph of every absent part in tests/services/absent_parts.jsonl
# (at most 0.016 over the whole evidence's median).
SEMANTIC_MARGIN = 0.02
# Shared words count towards the score: a full lexical match is worth this much cosine.
LEXICAL_BONUS = 0.03
# A further paragraph is taken when it is this close to the part's best (another document
# answering the same part: "白石和青禾各…").
NEAR_BEST = 0.004
MAX_PARAGRAPHS = 3
# Paragraphs searched for a sentence holding the asked-for kind of value: the best few by score.
MAX_CANDIDATES = 4
MAX_QUOTES = 4  # nearest evidence: the reader judges, so show a little more of it
VERIFIED_QUOTES = 2  # a verified part: its best sentence and the next best
MIN_SAME_DOCUMENT = 2  # other paragraphs of the best one's document needed to judge it by meaning
SECOND_SENTENCE_RATIO = 0.6
CHARACTER_WEIGHT = 0.3
# Character overlap (Jaccard, names and numbers left out) of two sibling parts' verifying
# sentences below which they are not parallel answers.
PARALLEL_LIKENESS = 0.5
# Characters two parts have alike in a run (their shared predicate, "质保期是几年") that make
# them one question asked of two subjects.
SHARED_PREDICATE = 4


def judge_parts(
    parts: Sequence[str],
    needs: Sequence[Need],
    passages: Sequence[Passage],
    cosines: Sequence[Sequence[float]] | None = None,
    focus: Sequence[str] | None = None,
    affinity: Affinity | None = None,
) -> list[PartSupport]:
    """Per part, the quotes that support it, or the nearest evidence (``verified`` False).

    ``focus`` is each part in the user's own words (a rewrite's lent topic left out): the
    characters a quoted sentence should share. ``affinity`` says by meaning whether a thing a
    part asks about, in words no evidence uses, is what a document is about."""
    supports = []
    weights: dict[str, float] | None = None  # the evidence's character rarity, once, when needed
    for index, (part, wanted) in enumerate(zip(parts, needs, strict=True)):
        row = cosines[index] if cosines is not None else None
        chosen, verified, candidates = _supporting_paragraphs(wanted, passages, row)
        own = focus[index] if focus is not None else part
        ranked = _best_sentences(own, wanted, [passages[j] for j in chosen])
        kinds = asked_kinds(own)
        decided_by_words = verified and _on_subject(own, part, ranked[:VERIFIED_QUOTES], kinds, passages, affinity)
        if kinds and not decided_by_words and row is not None:
            # What the part asks for decides: a sentence holding that kind of value, about this
            # subject, sharing the part's own words verifies it; words matched without such a
            # value (a fee question met by the zone definitions) do not. Only with meaning
            # known (the retrieval service's matcher): by words alone a paraphrase stays nearest.
            weights = weights if weights is not None else rarity(passages)
            looked_in = [passages[j] for j in candidates]
            answering = answering_sentences(own, kinds, looked_in, passages, affinity, part, weights)
            verified = bool(answering)
            if answering:
                # What answers it, then its paragraphs' next sentences (a procedure's next step),
                # never another paragraph that merely stands near.
                shown = {(q.paragraph_id, q.sentence) for q in answering}
                places = {q.paragraph_id for q in answering}
                ranked = answering + [
                    q for q in ranked if q.paragraph_id in places and (q.paragraph_id, q.sentence) not in shown
                ]
        quotes = ranked[: VERIFIED_QUOTES if verified else MAX_QUOTES]
        if not quotes:
            quotes, verified = _sharing_quotes(own, wanted, passages), False
        if not verified and kinds:
            stated = _stated_in_full(own, part, wanted, quotes, kinds, passages, affinity)
            if stated is not None:
                quotes, verified = [stated, *(q for q in quotes if q != stated)][:VERIFIED_QUOTES], True
        # A part still asking "each" of several subjects (its split failed) needs more than one
        # document behind it: one subject's answer does not verify the other's.
        if asks_each(part) and len({q.document_name for q in quotes}) < 2:
            verified = False
        supports.append(PartSupport(part, tuple(quotes), verified and bool(quotes)))
    return _parallel(supports)


def _stated_in_full(
    own: str,
    part: str,
    wanted: Need,
    quotes: Sequence[SupportQuote],
    kinds: frozenset[AnswerKind],
    passages: Sequence[Passage],
    affinity: Affinity | None,
) -> SupportQuote | None:
    """The first quote that answers the part although no rule above verified it: it holds the
    kind of value the part asks for, its document is about what the part asks about, and it
    (with its heading) names every word of the part, a shortened word ("年假" of "年休假")
    included. Such a quote is the answer; calling it only the nearest evidence would contradict it."""
    by_id = {p.paragraph.id: p for p in passages}
    needed = decisive(kinds)
    for quote in quotes:
        passage = by_id.get(quote.paragraph_id)
        if passage is None or not any(carries(kind, quote.sentence) for kind in needed):
            continue
        text = f"{passage.heading}\n{normalise(quote.sentence)}"
        named = bool(wanted.terms) and all(match_credit(text, t) > 0 for t in wanted.terms)
        if named and about_what_is_asked(own, part, passage, passages, affinity):
            return quote
    return None


def _sharing_quotes(own: str, wanted: Need, passages: Sequence[Passage]) -> list[SupportQuote]:
    """The nearest evidence of a part no paragraph answers or comes near by the rules above (a
    "多少" part and paragraphs without a number, a shortened word the cover share half counts):
    the best sentences of the paragraphs sharing most of its words. A part that shares a word
    with a retrieved paragraph is never said to have nothing in the documents."""
    shares = [words_shared(wanted, p) for p in passages]
    sharing = sorted((j for j, share in enumerate(shares) if share > 0), key=lambda j: -shares[j])
    return _best_sentences(own, wanted, [passages[j] for j in sharing[:MAX_PARAGRAPHS]])[:MAX_QUOTES]


def _parallel(supports: list[PartSupport]) -> list[PartSupport]:
    """Parts that ask the same of two subjects ("白石和青禾…各…") are answered by sentences
    written alike: the two townships' reports say the same thing in the same words. A part
    verified by a sentence unlike the one that verified its sibling is only nearest evidence
    (the 青禾 part met "共有车辆3辆", the 白石 part "公务用车购置及运行维护费9.50万元")."""
    checked = list(supports)
    for index, support in enumerate(supports):
        name = leading_name(support.part)
        found = sibling(support.part, name, supports) if name and support.verified else None
        if found is None or not found[0].verified:
            continue
        other, other_name = found
        mine = _skeleton(support.quotes[0].sentence, name)
        theirs = _skeleton(other.quotes[0].sentence, other_name)
        if _likeness(mine, theirs) < PARALLEL_LIKENESS:
            checked[index] = replace(support, verified=False)
    return _one_answer_one_subject(checked)


def _one_answer_one_subject(supports: list[PartSupport]) -> list[PartSupport]:
    """Two parts that ask the same of two subjects ("驰骋电驴的大架子，…质保期是几年？" and
    "澄风空气净化器整台机器，…质保期是几年？") are not both answered by one sentence: it
    stays verified for the part whose subject its document's name shares more of."""
    checked = list(supports)
    for first, second in itertools.combinations(range(len(supports)), 2):
        one, other = checked[first], checked[second]
        if not (one.verified and other.verified and one.quotes[0].sentence == other.quotes[0].sentence):
            continue
        run = difflib.SequenceMatcher(None, one.part, other.part, autojunk=False).find_longest_match()
        if run.size < SHARED_PREDICATE:
            continue  # two different questions may well share an answer
        title = characters(one.quotes[0].document_name)
        predicate = one.part[run.a : run.a + run.size]
        ones, others = (len(characters(s.part.replace(predicate, "")) & title) for s in (one, other))
        loser = second if ones >= others else first
        checked[loser] = replace(checked[loser], verified=False)
    return checked


def _skeleton(sentence: str, name: str) -> set[str]:
    """A sentence's characters without its subject's name and its numbers: what two parallel
    sentences share."""
    return {ch for ch in characters(sentence.replace(name, "")) if not ch.isdigit()}


def _likeness(first: set[str], second: set[str]) -> float:
    return len(first & second) / len(first | second) if first | second else 0.0


def _on_subject(
    own: str,
    part: str,
    quotes: Sequence[SupportQuote],
    kinds: frozenset[AnswerKind],
    passages: Sequence[Passage],
    affinity: Affinity | None,
) -> bool:
    """Whether the words' verdict stands: a quote holds the asked-for kind of value, and its
    document is about what the part asks about (shared words also come from another subject's
    document: a hospital question meeting the library's opening hours)."""
    by_id = {p.paragraph.id: p for p in passages}
    return any(
        carries_any(kinds, q.sentence)
        and q.paragraph_id in by_id
        and about_what_is_asked(own, part, by_id[q.paragraph_id], passages, affinity)
        for q in quotes
    )


def _supporting_paragraphs(
    wanted: Need, passages: Sequence[Passage], row: Sequence[float] | None
) -> tuple[list[int], bool, list[int]]:
    """Indexes of the paragraphs that answer the part (best first), whether that is verified by
    words or meaning, and the paragraphs worth looking in for a sentence of the asked-for kind."""
    if not wanted.terms or not passages:
        return [], False, []  # a part with no content word ("？？", emoji) cannot be checked against anything
    shares = [paragraph_share(wanted, p) for p in passages]
    covered = sorted((j for j, s in enumerate(shares) if s >= COVER_THRESHOLD), key=lambda j: -shares[j])
    if row is None or len(row) != len(passages):
        sharing = sorted((j for j, s in enumerate(shares) if s > 0), key=lambda j: -shares[j])
        return covered[:MAX_PARAGRAPHS], bool(covered), sharing[:MAX_CANDIDATES]
    scores = [row[j] + LEXICAL_BONUS * shares[j] for j in range(len(passages))]
    loose = _without_unknown_names(wanted, passages)
    allowed = sorted((j for j, p in enumerate(passages) if plausible(loose, p)), key=lambda j: -scores[j])
    if not allowed:
        return covered[:MAX_PARAGRAPHS], bool(covered), covered[:MAX_CANDIDATES]
    best = scores[allowed[0]]
    near = [j for j in allowed if scores[j] >= best - NEAR_BEST]
    candidates = list(dict.fromkeys(covered + allowed))[:MAX_CANDIDATES]
    if covered:
        return list(dict.fromkeys(covered + near))[:MAX_PARAGRAPHS], True, candidates
    return near[:MAX_PARAGRAPHS], _stands_out(scores, passages, near[0]), candidates


def _without_unknown_names(wanted: Need, passages: Sequence[Passage]) -> Need:
    """``wanted`` with the names no evidence document mentions demoted to plain words: jieba
    glues colloquial pieces (子爆, 想租张) into unknown words that look like names, and one of
    those must not veto every paragraph. A real name missing from all the evidence is demoted
    too; the part then stays unverified unless its best paragraph stands out in its document."""
    terms = tuple(
        t
        if not t.anchor or t.numeric or any(contains(p.document_text, t) for p in passages)
        else replace(t, anchor=False)
        for t in wanted.terms
    )
    return replace(wanted, terms=terms)


def _stands_out(scores: Sequence[float], passages: Sequence[Passage], best: int) -> bool:
    """Whether the best paragraph stands out among the other retrieved paragraphs of its own
    document. Against other documents' paragraphs any paragraph of the right document stands
    out, answer or not (a compound question's evidence), so those are no reference; with too
    few paragraphs of the document to compare, meaning alone does not verify."""
    document = passages[best].paragraph.document_name
    same = [scores[j] for j, p in enumerate(passages) if p.paragraph.document_name == document and j != best]
    if len(same) < MIN_SAME_DOCUMENT:
        return False
    return scores[best] - statistics.median(same) >= SEMANTIC_MARGIN


def _best_sentences(own: str, wanted: Need, chosen: Sequence[Passage]) -> list[SupportQuote]:
    """The chosen paragraphs' sentences that best answer the part, best first: its words, its
    characters, a number when it asks "how much"; a paraphrase shares few words, so ties keep
    the paragraphs' order."""
    asked = characters(own)
    scored: list[tuple[float, int, Passage, str]] = []
    for passage in chosen:
        for sentence in sentences(passage.paragraph.content):
            if is_instruction(sentence):
                continue
            overlap = len(asked & characters(sentence)) / len(asked) if asked else 0.0
            score = sentence_score(wanted, passage.heading, sentence) + CHARACTER_WEIGHT * overlap
            scored.append((score, len(scored), passage, sentence))
    if not scored:
        return []
    scored.sort(key=lambda item: (-item[0], item[1]))
    best = scored[0][0]
    # Each chosen paragraph's best sentence first (two documents may answer one part: "白石和青禾
    # 各…"), then the best of the rest.
    kept: list[tuple[float, int, Passage, str]] = []
    for item in scored:
        if all(item[2] is not lead[2] for lead in kept):
            kept.append(item)
    leads = len(kept)
    kept += [item for item in scored if item not in kept and item[0] >= best * SECOND_SENTENCE_RATIO]
    return [
        SupportQuote(passage.paragraph.id, passage.paragraph.document_name, sentence, round(score, 4))
        for score, _, passage, sentence in kept[: max(MAX_QUOTES, leads)]
    ]
