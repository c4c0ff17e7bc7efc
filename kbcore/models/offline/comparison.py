"""A comparison the question asks ("哪个贵？贵多少？", "哪家掏得多？"), worked out from the quoted
numbers.

Quoting "售价399元" and "售价699元" does not answer "which is dearer, by how much": the reader
would have to do the sum. The offline model cannot reason, but it can subtract: when the verified
quotes hold one value for each of two things the question names, in the same unit, it says which
is larger and by how much, citing both quotes. Which value belongs to which thing is read from
the quote itself (the thing named in the clause before the number, as "4K室外摄像头售价699元"),
or from its document's name when the clause names neither (two townships' budget reports). When
the values cannot be paired or their units differ, the answer says what could not be compared
rather than compare what it cannot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from kbcore.models.base import PartSupport, SupportQuote
from kbcore.models.offline.terms import normalise, surface, terms_of

# A question that asks which of two is larger, or by how much they differ.
_ASKS = re.compile(
    r"(?:哪|谁)(?:个|家|边|样|位|种|款)?.{0,3}?(?:更|比较)?(?:贵|便宜|多|少|高|低|长|短|大|小|久|快|慢|早|晚)"
    r"|[贵多高长大少低短]多少|相差|差多少|差几|比一比|比比|对比一下|比较一下"
)
_VALUE = re.compile(
    r"(?<![\d.])(\d+(?:\.\d+)?)\s*"
    r"(万元|元|块|%|个工作日|工作日|天|日|小时|分钟|个月|年|周|人|名|次|本|册|公斤|千克|吨|公里|平方米|立方米|米)"
)
_CLAUSE_END = re.compile(r"[，,；;。、：:]")


@dataclass(frozen=True)
class Value:
    """A number a quote states, its unit, and the quote and thing it belongs to."""

    number: Decimal
    unit: str
    thing: str
    quote: SupportQuote

    @property
    def written(self) -> str:
        return f"{self.number}{self.unit}"


@dataclass(frozen=True)
class Comparison:
    """The two values compared (``larger`` first) and their difference; or, when they could not
    be compared, why (``reason``: "unpaired" or "units")."""

    larger: Value | None = None
    smaller: Value | None = None
    reason: str = ""

    @property
    def difference(self) -> str:
        assert self.larger is not None and self.smaller is not None
        return _plain(self.larger.number - self.smaller.number) + self.larger.unit


def asks_comparison(question: str) -> bool:
    return _ASKS.search(question) is not None


def compare(question: str, supports: Sequence[PartSupport]) -> Comparison | None:
    """The comparison ``question`` asks, from its verified quotes; None when it asks none or
    nothing it asks was verified (the parts' own verdicts say so then)."""
    if not asks_comparison(question):
        return None
    quotes = list(dict.fromkeys(q for s in supports if s.verified for q in s.quotes))
    if not quotes:
        return None
    words = [t.text for t in terms_of(question)]
    named = [(match, quote, _named(match, quote, words)) for quote in quotes for match in _numbers(quote)]
    # A word every value names (售价 in both clauses) tells none of them apart.
    common = set.intersection(*(set(n) for _, _, n in named)) if named else set()
    firsts: dict[str, Value] = {}
    for match, quote, names in named:
        own = [w for w in names if w not in common]
        if len(own) == 1:
            value = Value(Decimal(match.group(1)), match.group(2), _as_written(own[0], quote), quote)
            firsts.setdefault(own[0], value)
    if len(firsts) != 2:
        return Comparison(reason="unpaired")
    first, second = firsts.values()
    if first.unit != second.unit:
        return Comparison(first, second, reason="units")
    if first.number == second.number:
        return Comparison(first, second, reason="equal")
    return Comparison(first, second) if first.number > second.number else Comparison(second, first)


def _numbers(quote: SupportQuote) -> list[re.Match[str]]:
    return list(_VALUE.finditer(quote.sentence))


def _named(match: re.Match[str], quote: SupportQuote, words: Sequence[str]) -> list[str]:
    """The question's words the clause before ``match`` names (failing that, the quote's
    document name), without a word inside a longer one named beside it."""
    clause = normalise(_CLAUSE_END.split(quote.sentence[: match.start()])[-1])
    named = [w for w in words if w in clause] or [w for w in words if w in normalise(quote.document_name)]
    return [w for w in named if not any(w != other and w in other for other in named)]


def _as_written(word: str, quote: SupportQuote) -> str:
    return surface(word, quote.sentence) if word in normalise(quote.sentence) else surface(word, quote.document_name)


def _plain(number: Decimal) -> str:
    """A difference as the documents write numbers: no exponent, no trailing zeros."""
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
