"""Weighted topic terms for the offline model: which words of a question matter, and how much.

The offline model has no language understanding, so it decides "is this part answered?" and
"which sentence answers it?" by matching a question's content words against evidence text.
Words differ in how much they say: a coined name (青禾乡, 澄风AP-360) or a number pins a
question to one document, while 申请/规定 appear everywhere. Rarity comes from jieba's
bundled IDF table (offline); names and numbers are *anchors* a match must not miss.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from kbcore.text.segment import key_terms, warm_up, words

# Question words and filler that never occur in an answer: matching them only adds noise.
_QUESTION_WORD = re.compile(
    r"^(?:几|哪|怎|什么|多少|多长|多久|多大|多远|多高|多重|多快|多早|为何|何时|是不是|能不能|可不可以)"
)
_GENERIC = frozenset(
    """
    一般 大约 大概 最晚 最早 最多 最少 最长 最短 具体 规定 按照 根据 关于 以后 之前 之后 之内 以内 一共 总共
    每个 还要 下要 后要 交上去 告诉 说明 三件 两件 几件 不能 必须 时候 情况 问题 请问 知道 想 能领 能待
    自己 我家 我们 你们 以下 以上 第一 上有 又是 就是 这个 那个 一下 这样 那样 还能 还是 然后
    """.split()
)
_ADMIN_SUFFIX = "县乡镇市区省村"
_DIGITS = re.compile(r"^\d+(?:\.\d+)?$")
# Proper-noun tags from jieba.posseg: place, person (jieba tags many coined names so), organisation.
# The tagger also calls common words names (城市/ns, 长度/ns), so only rare tagged words count.
_NAME_TAGS = frozenset({"ns", "nr", "nt", "nrt", "nrfg"})
_NAME_MIN_IDF = 9.5
# Characters a name does not start or end with: particles, auxiliaries, time and measure words.
_FUNCTION_CHARS = frozenset(
    "县乡镇市区省没还不能最要下上后前时里内中人的了过去来次个该就都也又再可会应得把被在是有着每"
)
_UNKNOWN_IDF_BONUS = 1.0  # words missing from the IDF table are mostly coined names: rarer than the median
_GLUED_WORD_FACTOR = 0.6


@dataclass(frozen=True)
class Term:
    text: str  # normalised (NFKC, lower case), as it is searched for in normalised evidence
    weight: float  # IDF-based: rare and long words weigh more
    anchor: bool  # a name or number: the evidence must contain it
    numeric: bool  # a bare number: matches only as a whole number, in the paragraph or its heading


def normalise(text: str) -> str:
    """The form both questions and evidence are compared in (full-width → half-width, lower case)."""
    return unicodedata.normalize("NFKC", text).lower()


@functools.cache
def _idf() -> tuple[dict[str, float], float]:
    warm_up()
    import jieba.analyse  # loads the bundled IDF table (~0.6 s), only when the offline model is used

    table = jieba.analyse.default_tfidf
    return table.idf_freq, float(table.median_idf)


def load_dictionaries() -> None:
    """jieba's dictionary, IDF table and tagger: about two seconds, better spent at start-up
    than on a user's first question."""
    _idf()
    _proper_nouns("青禾乡")


@functools.lru_cache(maxsize=4096)
def _proper_nouns(text: str) -> frozenset[str]:
    import jieba.posseg

    return frozenset(normalise(p.word) for p in jieba.posseg.lcut(text) if p.flag in _NAME_TAGS)


def term_weight(word: str) -> float:
    """IDF, a little more for long words; an unknown word weighs like a rare one only if it looks coined."""
    idf, median = _idf()
    if word in idf:
        base = idf[word]
    elif _DIGITS.match(word) or _looks_coined(word):
        base = median + _UNKNOWN_IDF_BONUS
    else:
        base = median * _GLUED_WORD_FACTOR  # jieba's HMM glued common pieces (没休, 最多收): ordinary words
    return base * (1.0 + 0.1 * max(0, len(word) - 2))


def _is_anchor(word: str, names: frozenset[str]) -> bool:
    if _DIGITS.match(word):
        return True
    if word.isascii():
        return len(word) >= 2 and any(ch.isalnum() for ch in word)
    if any(ch.isascii() and ch.isalnum() for ch in word):
        return True  # mixed like "e5款"
    idf, _ = _idf()
    if word not in idf:
        return _looks_coined(word)
    return idf[word] >= _NAME_MIN_IDF and any(word in name for name in names)


def _looks_coined(word: str) -> bool:
    """An unknown word is a coined name (青禾, 星澜) unless jieba merely glued common pieces together.

    jieba's HMM also invents words like 最多收, 电池电量 or 没休: built from dictionary words, or
    starting/ending with a function character, they name nothing.
    """
    import jieba

    if word[0] in _FUNCTION_CHARS or word[-1] in _FUNCTION_CHARS:
        return False
    return not any(len(piece) >= 2 for piece in jieba.lcut(word, HMM=False))


def is_informative(word: str) -> bool:
    """False for question words and filler, which an answer never repeats."""
    if word in _GENERIC or _QUESTION_WORD.match(word):
        return False
    return not (word.isascii() and len(word) < 2 and not word.isdigit())


@functools.lru_cache(maxsize=8192)
def terms_of(text: str) -> tuple[Term, ...]:
    """The informative terms of ``text`` in order of appearance, each with its weight and anchor
    flag; with them the words jieba left in single characters (``_split_words``)."""
    names = _proper_nouns(text)
    cut = words(text)
    result: list[Term] = []
    for word in key_terms(text, cut):
        if not is_informative(word):
            continue
        result.append(Term(word, term_weight(word), _is_anchor(word, names), bool(_DIGITS.match(word))))
    known = {t.text for t in result}
    for word in _split_words(cut):
        if word not in known:
            result.append(Term(word, term_weight(word), anchor=False, numeric=False))
    return tuple(result)


# Characters that are no part of a content word: particles, auxiliaries, pronouns, question words.
_NOT_CONTENT = _FUNCTION_CHARS | frozenset("几多少么什怎咋啥哪吗呢啊吧呀你我他她它这那和与及或想请问给让对从向到")
_CJK = re.compile(r"^[\u4e00-\u9fff]$")


def _split_words(cut: list[str]) -> list[str]:
    """Words jieba cut into single characters ("年假有几天" → 年/假/有/几天), from the text's
    ``cut``: runs of two or more one-character pieces that are no particle or question word.
    Without them such a question has no content word at all, and nothing to search or verify by."""
    found: list[str] = []
    run: list[str] = []
    for piece in [*cut, ""]:
        if _CJK.match(piece) and piece not in _NOT_CONTENT:
            run.append(piece)
            continue
        if len(run) >= 2:
            found.append("".join(run))
        run = []
    return found


@functools.lru_cache(maxsize=1024)
def _number_pattern(number: str) -> re.Pattern[str]:
    # "10" must not match inside "2010", "100" or "10.5": numbers compare as whole numbers.
    return re.compile(rf"(?<![\d.]){re.escape(number)}(?!\.?\d)")


def contains(normalised_text: str, term: Term) -> bool:
    if term.numeric:
        return _number_pattern(term.text).search(normalised_text) is not None
    return term.text in normalised_text


@functools.lru_cache(maxsize=8192)
def _sub_words(word: str) -> tuple[str, ...]:
    import jieba

    warm_up()
    return tuple(w for w in jieba.lcut_for_search(word) if len(w) >= 2 and w != word)


def match_credit(normalised_text: str, term: Term) -> float:
    """1 for the term itself, 0.5 when only a part of a compound word occurs (工作日内 → 工作日)
    or the term is the text's word shortened (年假 for 年休假, 医保 for 医疗保险), else 0."""
    if contains(normalised_text, term):
        return 1.0
    if term.numeric or term.anchor:
        return 0.0
    if any(sub in normalised_text for sub in _sub_words(term.text)):
        return 0.5
    shortened = _shortened(term.text)
    return 0.5 if shortened is not None and shortened.search(normalised_text) else 0.0


# A Chinese word is shortened by keeping some of its characters in order: 年休假 → 年假,
# 医疗保险 → 医保, 公务用车 → 公车. At most this many characters left out between two kept ones.
_SHORTENED_GAP = 2


@functools.lru_cache(maxsize=4096)
def _shortened(word: str) -> re.Pattern[str] | None:
    """The longer words ``word`` may be short for: its characters in order, a few between each."""
    if not 2 <= len(word) <= 4 or not all(_CJK.match(ch) for ch in word):
        return None
    gap = f"[\u4e00-\u9fff]{{0,{_SHORTENED_GAP}}}"
    return re.compile(gap.join(re.escape(ch) for ch in word))


def surface(term: str, source: str) -> str:
    """The term as written in ``source``, with an administrative suffix kept (云岭 → 云岭县, ap → AP)."""
    pattern = re.escape(term) + f"[{_ADMIN_SUFFIX}]?"
    found = re.search(pattern, source, re.IGNORECASE) or re.search(pattern, normalise(source))
    return found.group(0) if found else term


def subject_terms(source: str, target: str, *, limit: int, skip_names: bool = False) -> list[str]:
    """Terms of ``source`` that ``target`` lacks, names first then by weight, in ``source`` order.

    This is how an elliptical follow-up gets its subject back: "如果需要延长，最多可以延长多少天？"
    after "云岭县行政许可申请受理后…" becomes "云岭县 行政许可 …：如果需要延长…". ``skip_names``
    leaves out the source's names when the target brings its own (a switch of subject).
    """
    present = normalise(target)
    candidates = [
        t for t in terms_of(source) if not contains(present, t) and not (skip_names and t.anchor and not t.numeric)
    ]
    ranked = sorted(candidates, key=lambda t: (not t.anchor, -t.weight))[:limit]
    chosen = {t.text for t in ranked}
    return [surface(t.text, source) for t in candidates if t.text in chosen]


def proper_subject(text: str) -> str:
    """The first name in ``text`` that is surely a subject — a place or organisation the tagger
    knows, or one with an administrative suffix (白石镇) — as written; "" when there is none.

    Stricter than ``leading_name``: jieba glues colloquial pieces (输错, 子爆) into unknown
    words that look coined, and swapping one of those in for a question's subject would turn
    "连续输错会怎么样？" into a question about a company called 输错."""
    names = _proper_nouns(text)
    for term in terms_of(text):
        if not term.anchor or term.numeric or term.text.isascii():
            continue
        written = surface(term.text, text)
        if term.text in names or written[-1] in _ADMIN_SUFFIX:
            return written
    return ""


# Noun tags a question's own subject can carry; time and place-word tags (t, s, f) say when or
# where, not what.
_NOUN_TAGS = frozenset({"n", "nz", "nt", "ns", "nr", "nrt", "nrfg", "vn", "eng", "j"})
_NOT_A_SUBJECT = frozenset(
    {"时候", "人", "人家", "事", "情况", "问题", "东西", "地方", "家里", "家里人"}
    # When, not what: the asked-for kind of value covers these ("几点", "多久").
    | {"时间", "工作日", "周末", "节假日", "上午", "下午", "晚上", "早上", "中午", "今年", "去年", "明年", "期间"}
)


@functools.lru_cache(maxsize=1024)
def has_own_noun(text: str) -> bool:
    """Whether ``text`` has a noun that can be what it asks about (a "吗" question without one,
    "头一回开机之前还得先弄点啥", leaves its subject to the chat before it)."""
    import jieba.posseg

    return any(p.flag in _NOUN_TAGS and p.word not in _NOT_A_SUBJECT for p in jieba.posseg.lcut(text))


# Tags of a common noun: what a question asks about, unlike a name (which must be matched as
# written, see ``Term.anchor``).
_THING_TAGS = frozenset({"n", "nz", "vn", "j"})


@functools.lru_cache(maxsize=1024)
def asked_things(text: str) -> tuple[str, ...]:
    """The dictionary nouns of ``text`` (two characters or more, not filler), normalised. Words
    jieba's HMM glues from colloquial pieces ("办张", "子爆") are not things."""
    import jieba.posseg

    return tuple(
        normalise(p.word)
        for p in jieba.posseg.lcut(text, HMM=False)
        if p.flag in _THING_TAGS and len(p.word) >= 2 and p.word not in _NOT_A_SUBJECT and is_informative(p.word)
    )


def has_names(text: str) -> bool:
    """True when ``text`` names its own subject (a place, organisation or product)."""
    return any(t.anchor and not t.numeric for t in terms_of(text))


def leading_name(text: str) -> str:
    """The first place or organisation ``text`` names (云岭县, 星澜), the subject a compound question shares.

    Numbers and latin model codes are left out: they belong to one part, not to the question.
    """
    for term in terms_of(text):
        if term.anchor and not term.numeric and not term.text.isascii():
            return surface(term.text, text)
    return ""
