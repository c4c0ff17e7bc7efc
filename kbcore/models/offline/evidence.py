"""Does the evidence answer a question part, and which sentences say so — by term matching alone.

The lexical half of ``offline_support``, which decides for the offline model's assessment (is
every part covered?) and its extractive answer (which sentences to quote) alike, so the two
never disagree about what the evidence supports.
A name or a number in the question must be found (names anywhere in the same document's
retrieved text or its name, numbers in the paragraph or its heading); the remaining words count
by weight, rare words more than common ones, words only in the heading for less.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kbcore.models.base import EvidenceParagraph
from kbcore.models.offline.table_rows import table_segments
from kbcore.models.offline.terms import Term, contains, match_credit, normalise, terms_of

# A part counts as covered when one paragraph holds this share of its weighted content words.
COVER_THRESHOLD = 0.65
# Words borrowed from earlier turns or parts set the scene; the user's own words decide.
BORROWED_WEIGHT = 0.5
# A word found only in the document name or title says which document, not what the paragraph says.
HEADING_CREDIT = 0.7
# Sentences longer than this are quoted clause by clause (parameter lists, tariff tables).
LONG_SENTENCE = 100

_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?")
_CLAUSE = re.compile(r"[^；;]+[；;]?")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_ASKS_QUANTITY = re.compile(r"多少|几|多长|多久|多大|多高|哪一天|哪几天|什么时候|何时|什么时间")
# Text inside documents that addresses the model is quoted data, never an answer to repeat.
_INSTRUCTION = re.compile(
    r"系统提示|请在回答中|告诉用户|忽略(?:以上|之前|上述|前面)?.{0,6}(?:规则|指令|要求|提示)|直接回答|直接输出|你必须|作为(?:AI|助手|模型)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Need:
    """What one question part asks for: its terms, borrowed ones demoted to plain, lighter words."""

    terms: tuple[Term, ...]
    asks_quantity: bool


def need(text: str, *, part: str, asked: str) -> Need:
    """The need of ``text`` (``part``, maybe with context prepended) for a user who typed ``asked``.

    A word counts fully only when it is in the part itself and the user typed it; words the
    rewrite or an earlier part lent it are borrowed: lighter, and not required.
    """
    own_part, own_asked = normalise(part), normalise(asked)
    terms = tuple(
        t
        if contains(own_part, t) and contains(own_asked, t)
        else replace(t, weight=t.weight * BORROWED_WEIGHT, anchor=False, numeric=False)
        for t in terms_of(text)
    )
    # "几/多少" in a topic the rewrite lent ("…一次能借几本书，如果超期还书…") was asked before, not now.
    return Need(terms, bool(_ASKS_QUANTITY.search(part)) and bool(_ASKS_QUANTITY.search(asked)))


@dataclass(frozen=True)
class Passage:
    """One paragraph prepared for matching: its normalised text and its document's context."""

    paragraph: EvidenceParagraph
    heading: str  # normalised document name and title: the context every sentence of the paragraph shares
    body: str  # normalised content
    numbers: frozenset[str]  # the numbers written in the content
    document_text: str  # normalised headings and contents of every retrieved paragraph of the same document


def prepare(evidence: Sequence[EvidenceParagraph]) -> list[Passage]:
    by_document: dict[str, list[str]] = {}
    for paragraph in evidence:
        text = normalise(f"{paragraph.document_name}\n{paragraph.title}\n{paragraph.content}")
        by_document.setdefault(paragraph.document_name, []).append(text)
    return [
        Passage(
            paragraph=p,
            heading=normalise(f"{p.document_name}\n{p.title}"),
            body=normalise(p.content),
            numbers=frozenset(_NUMBER.findall(normalise(p.content))),
            document_text="\n".join(by_document[p.document_name]),
        )
        for p in evidence
    ]


def _anchors_found(terms: Sequence[Term], passage: Passage) -> bool:
    for term in terms:
        if term.numeric and not (contains(passage.body, term) or contains(passage.heading, term)):
            return False
        if term.anchor and not term.numeric and not contains(passage.document_text, term):
            return False
    return True


def _content_share(terms: Sequence[Term], body: str, heading: str = "") -> float:
    """Weighted share of the non-anchor words found (1 when the part has only names and numbers).

    A word only in the ``heading`` earns partial credit: it places the paragraph, it does not answer.
    """
    content = [t for t in terms if not t.anchor]
    total = sum(t.weight for t in content)
    if total == 0:
        return 1.0
    found = sum(t.weight * max(match_credit(body, t), HEADING_CREDIT * match_credit(heading, t)) for t in content)
    return found / total


def _has_answer_number(wanted: Need, passage: Passage) -> bool:
    """A "多少/几天" part needs a paragraph with a number of its own, not only the question's numbers."""
    asked = {t.text for t in wanted.terms if t.numeric}
    return bool(passage.numbers - asked)


def eligible(wanted: Need, passage: Passage) -> bool:
    """The hard conditions no similarity can replace: the part's names and numbers are there,
    and a "多少/几天" part finds a number of its own."""
    if not _anchors_found(wanted.terms, passage):
        return False
    return not (wanted.asks_quantity and not _has_answer_number(wanted, passage))


def plausible(wanted: Need, passage: Passage) -> bool:
    """The looser conditions for a match by meaning: one of the part's names is in the document
    (a part may name two places, each paragraph only one; jieba also takes glued colloquial
    words for names), and a "多少/几天" part finds a number of its own."""
    names = [t for t in wanted.terms if t.anchor and not t.numeric]
    if names and not any(contains(passage.document_text, t) for t in names):
        return False
    return not (wanted.asks_quantity and not _has_answer_number(wanted, passage))


def paragraph_share(wanted: Need, passage: Passage) -> float:
    if not eligible(wanted, passage):
        return 0.0
    return _content_share(wanted.terms, passage.body, passage.heading)


def words_shared(wanted: Need, passage: Passage) -> float:
    """Weighted share of the part's words (its names and numbers too) that the paragraph or its
    heading holds, a shortened word counting half, whatever the hard conditions say: above 0,
    the paragraph is about something the part asks, and its absence cannot be concluded."""
    total = sum(t.weight for t in wanted.terms)
    if total == 0:
        return 0.0
    text = f"{passage.heading}\n{passage.body}"
    return sum(t.weight * match_credit(text, t) for t in wanted.terms) / total


def is_instruction(sentence: str) -> bool:
    """Text inside a document that addresses the model: data, never a quote."""
    return _INSTRUCTION.search(sentence) is not None


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: a Markdown table row is one, its cells named by its header row
    ("字段：值；…", ``table_rows``); prose as ``_prose_sentences``."""
    return [s for chunk, row in table_segments(text) for s in ([chunk] if row else _prose_sentences(chunk))]


def _prose_sentences(text: str) -> list[str]:
    """Sentences of ``text``; a long one is cut into its clauses, so a quote stays on point."""
    result: list[str] = []
    for sentence in (s.strip() for s in _SENTENCE.findall(text)):
        if len(sentence) > LONG_SENTENCE:
            result.extend(c.strip() for c in _CLAUSE.findall(sentence) if c.strip())
        elif sentence:
            result.append(sentence)
    return result


def sentence_score(wanted: Need, heading: str, sentence: str) -> float:
    score = _content_share(wanted.terms, normalise(sentence), heading)
    # A number the heading already carries ("…2026年部门预算说明") places every sentence under it.
    numbers = [t for t in wanted.terms if t.numeric and not contains(heading, t)]
    if numbers:
        found = sum(contains(normalise(sentence), t) for t in numbers) / len(numbers)
        score *= 0.5 + 0.5 * found  # "90至99周岁" is answered where 90 and 99 are written
    if wanted.asks_quantity and any(ch.isdigit() for ch in sentence):
        score += 0.15  # "多少/几天" is answered by a sentence with a number in it
    return score
