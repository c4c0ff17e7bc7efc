"""The offline model's follow-up rewrite: an elliptical question made standalone, worded as a
person would write it.

"那报的比例呢？" after "县里的居民医保，去市里的大医院住院，自己先得掏多少才开始给报？" becomes
"县里的居民医保，那报的比例呢？": the earlier question's topic clause (its first clause that
says what it is about) leads, the user's words follow unchanged. "白石镇呢？" after a question
about 青禾乡 becomes that question with 白石镇 in 青禾乡's place. Earlier versions prefixed
keyword fragments ("县里 医保 市里 住院 先得：…"), which nobody would type and which read badly
in the trace and the search progress.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kbcore.models.base import ChatMessage
from kbcore.models.offline.answer_kinds import asked_kinds
from kbcore.models.offline.terms import has_names, leading_name, proper_subject, terms_of
from kbcore.models.prompts import SUMMARY_ANSWER, SUMMARY_MARKER, SUMMARY_QUESTION

FOLLOWUP_DEPTH = 3  # how many earlier questions may lend a subject to an elliptical follow-up
TOPIC_TERMS = 2  # a clause with a name or this many content words says what a question is about
_CLAUSE = re.compile(r"[^，,、；;：:？?。！!]+")
_TRAILING = "？?。！!；;，,、 "
_ASKING = re.compile(r"几|多少|多长|多久|多大|哪|什么|怎么|怎样|如何|是否|能否|能不能|可不可以|有没有|吗|呢")
_DANGLING = "是有的在要得能可会需应该为了 "
# How a question says it continues the one before: "那…", "如果…", "和上一年相比…".
_CONTINUES = re.compile(r"^(?:那|那么|要是|如果|假如|万一|若是|还有|另外|再问|比起|(?:和|跟|同|与).{0,8}?(?:相比|比))")
# Words that point back at something named earlier ("这个期限", "那些材料"), or add to it
# ("…之前还得先弄点啥").
_POINTS_BACK = re.compile(r"这个|那个|这些|那些|这种|那种|这项|那项|该项|上述|它们|它的|这样的话|还得|还要|还需")


# "那晚上呢？": a condition and 呢, nothing asked (a hypothetical, "那要是…呢", is a new question).
_SWAPS = re.compile(r"^(?!(?:那么|那)?(?:要是|如果|假如|万一|若是))(?:那么|那)?([^，,、；;。？?！!]+?)呢[？?。]?$")


# What may stand beside a name in a question that is only that name: "那边", "呢", "怎么样".
_ONLY_POINTING = frozenset("那这边里儿的呢吗啊呀吧么怎样如何又也还再")


def earlier_questions(history: Sequence[ChatMessage]) -> list[str]:
    """The user's earlier questions, newest first; a compacted summary contributes its 问： lines."""
    questions: list[str] = []
    summary_questions: list[str] = []
    for message in history:
        if message.role != "user":
            continue
        if message.content.startswith(SUMMARY_MARKER):
            summary_questions.extend(_summary_questions(message.content))
        else:
            questions.append(message.content)
    return list(reversed(summary_questions + questions))


def _summary_questions(summary: str) -> list[str]:
    found: list[str] = []
    for line in summary.splitlines():
        line = line.strip()
        if line.startswith(SUMMARY_QUESTION):
            found.append(line[len(SUMMARY_QUESTION) :].split(SUMMARY_ANSWER, 1)[0].strip())
    return [q for q in found if q]


def topic_clause(question: str) -> str:
    """What ``question`` is about: its first clause with a name or enough content words, up to
    where it starts asking ("云岭县人民医院ICU每天的探视时间是几点到几点" → "云岭县人民医院ICU每天的
    探视时间"). What it asked belongs to it, not to the follow-up, and would pull the search
    back to the earlier answer."""
    for found in _CLAUSE.finditer(question):
        clause = found.group(0).strip()
        terms = terms_of(clause)
        if any(t.anchor and not t.numeric for t in terms) or len(terms) >= TOPIC_TERMS:
            return _before_asking(clause)
    return _before_asking(question.strip().rstrip(_TRAILING))


def asked_clause(question: str) -> str:
    """``question``'s clauses up to and with the first that asks ("县城中心商圈路边停车怎么收费"):
    what a follow-up that only changes a condition asks again."""
    clauses = [m.group(0).strip() for m in _CLAUSE.finditer(question)]
    for end, clause in enumerate(clauses, 1):
        if _ASKING.search(clause):
            return "，".join(c for c in clauses[:end] if c)
    return question.strip().rstrip(_TRAILING)


def only_swaps_condition(question: str) -> bool:
    """Whether ``question`` asks nothing of its own and only names another condition for the
    question before ("那晚上呢？", "那二类区域呢？"): no asking word, no kind of value asked, no
    hypothetical ("那要是…呢？" asks what happens then, not the earlier question again)."""
    found = _SWAPS.match(question.strip())
    if found is None:
        return False
    condition = found.group(1)
    return bool(terms_of(condition)) and not _ASKING.search(condition) and not asked_kinds(condition)


def _before_asking(clause: str) -> str:
    """``clause`` up to its first question word, without the verb left dangling; the whole
    clause when that would leave no content word."""
    asking = _ASKING.search(clause)
    subject = clause[: asking.start()].rstrip(_DANGLING) if asking else clause
    return subject if terms_of(subject) else clause


def with_subject_of(source: str, question: str) -> str:
    """``question`` ("白石镇呢？", "青禾乡那边呢？") as ``source`` asked of its own subject:
    ``source`` with its leading name replaced; ``question`` itself when that cannot be done."""
    old = leading_name(source)
    new = proper_subject(question)
    if not old or not new or old == new or old not in source:
        return question
    return source.replace(old, new, 1)


def subject_source(earlier: Sequence[str]) -> str:
    """The earlier question a follow-up takes its subject from: the newest that names one."""
    return next((q for q in earlier if has_names(q)), earlier[0])


def lent_context(history: Sequence[ChatMessage], question: str) -> str:
    """The whole earlier question a rewrite of ``question`` took its topic from ("" when none):
    the rewrite shows only the topic, but every word of that question may place the answer."""
    earlier = earlier_questions(history)[:FOLLOWUP_DEPTH]
    if not earlier or standalone_question(history, question) == question:
        return ""
    return subject_source(earlier)


def stands_alone(question: str) -> bool:
    """Whether ``question`` is surely complete without the chat before it: it names its own
    subject (and is not only that name, "白石镇呢？", which asks the earlier question again of
    it). Any other question may leave its subject out, however many words it has ("押金多少？"
    right after a question about a rental) or may not ("摄像头保修多久？" after a question about
    a trip): it is rewritten with the earlier subject, and the first round's evidence decides
    whether the lent words stay (``borrowing.supported_reading``)."""
    if not any(ch.isalnum() for ch in question):
        return True  # emoji or punctuation only: nothing to complete, nothing to glue it to
    # Only a name the tagger knows or an administrative suffix marks counts: jieba glues
    # colloquial pieces (输错) into words that look coined, and those name nothing.
    return bool(proper_subject(question)) and not only_a_name(question)


def only_a_name(question: str) -> bool:
    """Whether ``question`` is a name and nothing else of content ("白石镇呢？", "青禾乡那边呢？"):
    it asks the earlier question again, of that subject."""
    name = proper_subject(question)
    rest = question.replace(name, "") if name else ""
    return bool(name) and all(not ch.isalnum() or ch in _ONLY_POINTING for ch in rest)


def says_it_continues(question: str) -> bool:
    """Whether ``question`` says it goes on from the chat before it: it starts by continuing
    ("那周末呢？", "如果…", "和上一年相比…") or points back ("这个期限", "还得…")."""
    text = question.strip()
    return bool(_CONTINUES.match(text) or _POINTS_BACK.search(text))


def standalone_question(history: Sequence[ChatMessage], question: str) -> str:
    """``question`` with the subject it leaves out taken from the questions before it.

    A question that names its own subject stands alone, unless it is only that name ("白石镇呢？"),
    which asks the earlier question again of another subject. Without history the question is
    already standalone.
    """
    earlier = earlier_questions(history)[:FOLLOWUP_DEPTH]
    if not earlier:
        return question
    if stands_alone(question):
        return question
    source = subject_source(earlier)
    if only_a_name(question):
        return with_subject_of(source, question)
    # A question that only changes a condition asks the earlier question again under it, so it
    # keeps that question's asking words ("…停车怎么收费，那晚上呢？"); any other keeps its topic.
    topic = asked_clause(source) if only_swaps_condition(question) else topic_clause(source)
    if not topic or topic in question:
        return question
    return f"{topic}，{question.strip()}"
