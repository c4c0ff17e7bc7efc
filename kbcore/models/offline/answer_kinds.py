"""What kind of value a question part asks for, and whether a sentence carries one.

A paraphrased question shares few words with its answer ("公车" for "公务用车", "高寿补助" for
"高龄津贴"), so shared words alone rarely verify it, while meaning alone cannot tell the right
sentence of a document from its neighbours. What a part asks for narrows it down: "多少钱" is
answered by an amount, "几点" by a clock time, "多久" by a duration. A sentence that carries the
asked-for kind of value, in the subject's document, and shares the part's own distinguishing
characters is an answer; a sentence without such a value is not, however many words it shares
(a parking-fee question is not answered by the zone definitions).
"""

from __future__ import annotations

import re
from enum import Enum

from kbcore.models.offline.question_parts import is_comparison


class AnswerKind(Enum):
    MONEY = "money"
    AMOUNT_OR_SHARE = "amount or share"  # "能报多少": a sum or a percentage both answer it
    PERCENT = "percent"
    DURATION = "duration"
    TIME = "time"  # a clock time: "几点", "开门"
    DATE = "date"  # a day: "几号", "哪天"
    WHEN = "when"  # any point in time: "什么时候"
    COUNT = "count"
    MEASURE = "measure"
    PHONE = "phone"
    PROCEDURE = "procedure"
    YES_NO = "yes/no"


_DURATION_UNIT = r"(?:个)?(?:工作日|日|天|小时|钟头|分钟|秒|周(?!岁)|星期|个月|月|年)"
_COUNT_UNIT = r"(?:个|名|人|本|册|台|次|张|辆|口|件|所|家|套|间|床|项|类|档|级|位)"
_MEASURE_UNIT = r"(?:公斤|千克|kg|克|吨|平方米|平米|㎡|立方米|立方|米|厘米|毫米|公里|千米|瓦|W|伏|V|升)"

# How a part asks for each kind, in everyday words as in written ones.
_ASKS: dict[AnswerKind, re.Pattern[str]] = {
    AnswerKind.PERCENT: re.compile(r"几成|比例|百分之|百分比|多少%|打几折|几折"),
    AnswerKind.AMOUNT_OR_SHARE: re.compile(r"报多少(?!钱)|报销多少(?!钱)|给报多少|优惠|减免|打折|便宜"),
    AnswerKind.MONEY: re.compile(
        r"多少钱|几块|几元|多少元|花多少|花钱|要钱|收钱|收多少|交多少|赔多少|罚多少|领多少|掏多少|留了多少|安排了多少|多少经费"
        r"|费用?(?:是|要|为)?多少|收钱|怎么收"
    ),
    AnswerKind.DURATION: re.compile(
        r"多久|多长时间|几天|几个?小时|几个?钟头|几分钟|几个月|几年|多少天|多少个?工作日|几个工作日|多少年"
        r"|期限|质保期|保修期|有效期|借期|拖几天|挂多久|充多久"
    ),
    AnswerKind.TIME: re.compile(r"几点|开门|关门"),
    AnswerKind.DATE: re.compile(r"哪天|几号|哪一天|哪几天|最晚哪|几月几"),
    AnswerKind.WHEN: re.compile(r"什么时候|何时|什么时间|哪段时间|之前得"),
    AnswerKind.COUNT: re.compile(
        r"几个(?!月|小时|工作日|钟头)|几名|多少人|多少号人|多少名|几本|几册|几台|几次|几张|几辆|几口|多少个(?!工作日)"
        r"|几类|第几|几档|多少张|多少辆|多少台|多少本"
    ),
    AnswerKind.MEASURE: re.compile(r"多重|多大|多高|多远|多宽|多长(?!时间)|面积|几平|多少平|多少度|多少瓦|驮多"),
    AnswerKind.PHONE: re.compile(r"电话|热线|号码|打哪个号?"),
    AnswerKind.PROCEDURE: re.compile(
        r"怎么办|咋办|怎么弄|咋弄|怎么处理|如何|怎样|流程|手续|要带什么|带啥|什么材料|准备什么|准备啥|啥证明|变回来|先弄"
    ),
    AnswerKind.YES_NO: re.compile(r"吗[？?]?$|能不能|可不可以|是否|有没有|行不行|开门不|[^不]不[？?]$|没有[？?]$"),
}

# Things whose value is a sum ("押金", "津贴"): naming one asks for money only when the part
# asks for no other kind of value ("每月津贴，几号发？" asks a day, "押金多少？" a sum).
_MONEY_THINGS = re.compile(r"价格|价钱|收费|押金|补助|补贴|津贴|工资|罚款|预算")
# Kinds that are a value of their own; a part asking one of them is not asking for the sum a
# thing it names is worth.
_VALUE_KINDS = frozenset(
    {
        AnswerKind.PERCENT,
        AnswerKind.AMOUNT_OR_SHARE,
        AnswerKind.DURATION,
        AnswerKind.TIME,
        AnswerKind.DATE,
        AnswerKind.WHEN,
        AnswerKind.COUNT,
        AnswerKind.MEASURE,
        AnswerKind.PHONE,
    }
)

_NUMBER = r"(?<![\d.])\d+(?:\.\d+)?"
_WEEKDAY = r"(?:周|星期|礼拜)[一二三四五六日天]"
_CARRIES: dict[AnswerKind, re.Pattern[str]] = {
    AnswerKind.MONEY: re.compile(rf"{_NUMBER}\s*(?:万元|元|块|万)|免费|免收|不收费|不予报销|原价"),
    AnswerKind.PERCENT: re.compile(rf"{_NUMBER}\s*%|百分之|减半|{_NUMBER}成|倍"),
    AnswerKind.AMOUNT_OR_SHARE: re.compile(rf"{_NUMBER}\s*(?:万元|元|%)|百分之|减半|免收|免费|不予报销"),
    AnswerKind.DURATION: re.compile(
        rf"{_NUMBER}\s*{_DURATION_UNIT}|当日|当天|即时|当场|[一二三四五六七八九十两半]+{_DURATION_UNIT}"
    ),
    # A clock time, or the days it applies on ("周一闭馆" answers "开门不"), or round the clock.
    AnswerKind.TIME: re.compile(rf"\d{{1,2}}[:：]\d{{2}}|\d{{1,2}}点|{_WEEKDAY}|24小时|全天"),
    # A day: of the month or the calendar, a weekday, or a deadline counted in days ("60日内").
    AnswerKind.DATE: re.compile(
        rf"\d+月\d+[日号]|{_NUMBER}\s*(?:日|号)|{_WEEKDAY}|[月年季](?:底|初|末)|当日|当天|次日|{_NUMBER}\s*个?工作日"
    ),
    # Any point in time, a period ("每月") or a deadline ("…前") included.
    AnswerKind.WHEN: re.compile(
        rf"\d{{1,2}}[:：]\d{{2}}|\d+月\d+日|\d+年\d+月|{_WEEKDAY}|每(?:日|天|周|月|季度|年)|前|{_NUMBER}\s*{_DURATION_UNIT}"
    ),
    # "一个月" is a span and "第一个" an ordinal; "一名未成年人" is a count.
    AnswerKind.COUNT: re.compile(
        rf"{_NUMBER}\s*{_COUNT_UNIT}|(?<!第)[一二三四五六七八九十两]+(?!个){_COUNT_UNIT}|(?<![第一])[二三四五六七八九十两]+个"
    ),
    AnswerKind.MEASURE: re.compile(rf"{_NUMBER}\s*{_MEASURE_UNIT}"),
    AnswerKind.PHONE: re.compile(r"\d{5,}|\d{3,4}-\d{6,8}"),
    AnswerKind.PROCEDURE: re.compile(
        r"应当|应|请|须|需|持|携带|办理|联系|按|长按|先|提交|申请|拨打|取下|断电|重新|更换|补办|告知|到"
    ),
    AnswerKind.YES_NO: re.compile(r"可以|可|不得|不能|不予|不|须|应当|允许|禁止|免|闭馆|无需|无须|有|无|仅|限"),
}


def asked_kinds(part: str) -> frozenset[AnswerKind]:
    """The kinds of value ``part`` asks for; empty when it asks "what" or "which" in general."""
    text = part.strip()
    kinds = {kind for kind, pattern in _ASKS.items() if pattern.search(text)}
    if not kinds & _VALUE_KINDS and _MONEY_THINGS.search(text):
        kinds.add(AnswerKind.MONEY)
    # "最晚哪天之前" asks a day: the narrower kind says what answers it.
    if kinds & {AnswerKind.TIME, AnswerKind.DATE}:
        kinds.discard(AnswerKind.WHEN)
    # "报几成" asks a share, not an amount; "费用…多少" with a rate asked ("比例") likewise.
    if AnswerKind.PERCENT in kinds or AnswerKind.AMOUNT_OR_SHARE in kinds:
        kinds.discard(AnswerKind.MONEY)
    # A concrete value asked for makes the "吗" a formality ("要花钱吗" asks about money).
    if len(kinds) > 1:
        kinds.discard(AnswerKind.YES_NO)
    return frozenset(kinds)


def carries(kind: AnswerKind, sentence: str) -> bool:
    """Whether ``sentence`` holds a value of ``kind``."""
    return _CARRIES[kind].search(sentence) is not None


def carries_any(kinds: frozenset[AnswerKind], sentence: str) -> bool:
    """Whether ``sentence`` holds a value of one of ``kinds`` (true when none is asked for)."""
    return not kinds or any(carries(kind, sentence) for kind in kinds)


# Words that ask; the clause holding one is what the part asks, the others set the scene
# ("我奶奶今年83，户口在青禾乡，每个月能领多少高寿补助？").
_ASKING = re.compile(
    r"几|多少|多长|多久|多大|多重|哪|什么|怎么|怎样|如何|是否|能否|能不能|可不可以|有没有|吗|呢|咋|啥|不[？?]?$"
)
_CLAUSE = re.compile(r"[^，,；;、。！!？?—]+[？?]?")
# The words that ask, with the verb and the measure they ask in ("安排了多少", "多少钱", "几天"):
# no answer repeats them, and the verbs of paying and receiving are in every sentence with a sum.
_QUESTION_WORDS = re.compile(
    r"(?:(?:安排|留|掏|花|交|给|发|领|赔|罚|收|要|拿|报|补|借|付)了?)?(?:多少|几)个?(?:钱|块|元|天|点|号|名|人|次|本|年|月|小时|钟头|分钟|成|工作日|周|星期)?|多久|多长时间|什么时候|什么时间|哪天"
    r"|怎么办|咋办|怎么样|怎么|咋|啥|吗|呢|什么|哪[个些里儿]?|是否|能不能|可不可以|有没有"
)


def without_kind_words(text: str) -> str:
    """``text`` without the words that say what kind of value is asked ("花钱", "电话", "优惠"):
    they name the answer's form, not what it is about."""
    for pattern in (*_ASKS.values(), _MONEY_THINGS):
        text = pattern.sub(" ", text)
    return text


def asking_clauses(part: str) -> str:
    """The clauses of ``part`` that ask, without the words that ask (what is left says what
    about); a clause that only compares ("哪家掏得多？") asks nothing of the evidence. The whole
    part when no clause asks."""
    clauses = (m.group(0).strip() for m in _CLAUSE.finditer(part))
    asking = [c for c in clauses if c and _ASKING.search(c) and not is_comparison(c)]
    return _QUESTION_WORDS.sub(" ", "".join(asking) or part)
