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
from kbcore.models.offline.terms import has_names, has_own_noun, leading_name, proper_subject, terms_of
from kbcore.models.prompts import SUMMARY_ANSWER, SUMMARY_MARKER, SUMMARY_QUESTION

FOLLOWUP_DEPTH = 3  # how many earlier questions may lend a subject to an elliptical follow-up
ELLIPTICAL_TERMS = 3  # a question with fewer content words leans on the one before
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
    """Whether ``question`` is complete without the chat before it: it names its own subject,
    or it has enough content words, a noun of its own, and nothing that says it continues or
    points back. A complete question borrowed from would be glued to an unrelated one ("青禾乡
    政府今年公车要花，在县城中心商圈路边停车怎么收费？"), so only the incomplete ones borrow."""
    if not any(ch.isalnum() for ch in question):
        return True  # emoji or punctuation only: nothing to complete, nothing to glue it to
    elliptical = len(terms_of(question)) < ELLIPTICAL_TERMS
    if elliptical:
        return False
    if proper_subject(question) or _names_a_subject(question):
        return True
    text = question.strip()
    if _CONTINUES.match(text) or _POINTS_BACK.search(text):
        return False
    return has_own_noun(text)


def _names_a_subject(question: str) -> bool:
    """A name that is not a latin code: "E05" names a fault of something said before."""
    return any(t.anchor and not t.numeric and not t.text.isascii() for t in terms_of(question))


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
    if len(terms_of(question)) < ELLIPTICAL_TERMS and proper_subject(question):
        return with_subject_of(source, question)
    topic = topic_clause(source)
    if not topic or topic in question:
        return question
    return f"{topic}，{question.strip()}"
