"""The offline model's answer as a reader sees it: per question part, the quoted sentences
with their documents, what is only the nearest evidence, and what stays unverifiable.

Kept apart from the judging (``support``): this module decides wording and layout only; which
sentence answers which part is decided once, before, and handed in.

The layout is Markdown that also reads as plain text (the chat page renders Markdown; the API,
the log and the export show the text as is): the notice once, then one block per part — its
header when the question has several parts, its verdict when it is not verified, then each
quote on its own line as a block quote, its document after it in a lighter form::

    （未配置大模型：以下为资料原文摘录）

    1. 青禾乡90至99周岁的老人每月能领多少高龄津贴？
    > 90周岁至99周岁的，每人每月150元。 ——《青禾乡高龄津贴发放办法》

    2. 申请需要什么材料？
    未能确认资料回答了这一问，以下是资料中最接近的内容：
    > …… ——《……》

Three verdicts, worded apart: a verified part has its quotes and no line; a part whose quotes
are only the closest passages says they are not confirmed, without claiming the documents lack
it (they may well hold it); only a part no retrieved paragraph shares a word with, after the
loop looked, says the documents have nothing on it (``UNVERIFIED_LEAD``, with no quote).

A quoted sentence is never altered: facts are found verbatim in the answer. A comparison the
question asks ("哪个贵？贵多少？") gets one more line after the quotes, worked out from two
quoted values and citing both (``comparison``), or saying what could not be compared.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kbcore.answer_notice import FORMER_LABELS, OFFLINE_LABEL
from kbcore.models.base import PartSupport, PartVerdict
from kbcore.models.offline.comparison import Comparison, Value, compare

QUOTE_MARK = "> "
UNVERIFIED_LEAD = "无法根据资料核实"  # not in the documents: nothing retrieved shares its words
UNCONFIRMED_LEAD = "未能确认资料回答了"  # the closest passages, shown as such
NEAREST_AT_MOST = 2  # nearest evidence: enough to judge by, not a wall of quotes
NO_EVIDENCE = "未检索到与问题相关的资料，无法根据知识库回答："
_THIS_PART = "这一问"
_NEAREST_TAIL = "，以下是资料中最接近的内容："
NOTHING_RELEVANT = "检索到的资料中没有相关内容"
_UNVERIFIABLE_TAIL = f"：{NOTHING_RELEVANT}，本回答不作推测。"
_TRAILING_PUNCTUATION = "？?。！!；;，, "
_PART_HEADER = re.compile(r"^\d+\. ")
_POINTER = "见第{index}部分所引资料"
_POINTER_LINE = re.compile(r"^见第\d+部分所引资料")
_LEADS = (UNVERIFIED_LEAD, UNCONFIRMED_LEAD)
# A comparison asked, worked out from two quoted values (``comparison``), or why it was not.
COMPARED_LEAD = "按所引资料计算："
COMPARE_UNPAIRED = (
    "无法比较：所引资料中没有能分别对应所比两项的同类数值。"  # the lines naming a part that is not verified
)


def _bare(part: str) -> str:
    """The part on one line (a header or verdict line must not break), its closing punctuation dropped."""
    return " ".join(part.split()).rstrip(_TRAILING_PUNCTUATION)


def _cited(document_name: str) -> str:
    """The document after its quote: lighter than the quote, and its name still whole."""
    name = document_name.strip()
    if name.startswith("《") and name.endswith("》"):
        name = name[1:-1]
    return f"——《{name}》"


def _verdict_line(support: PartSupport, several: bool) -> str:
    """One short line for a part that is not verified ("" for a verified one). With one part
    there is no header, so the line names the part itself."""
    subject = _THIS_PART if several else f"“{_bare(support.part)}”"
    if support.verdict is PartVerdict.NEAREST:
        return UNCONFIRMED_LEAD + subject + _NEAREST_TAIL
    if support.verdict is PartVerdict.UNVERIFIABLE:
        return UNVERIFIED_LEAD + subject + _UNVERIFIABLE_TAIL
    return ""


def _part_block(support: PartSupport, quoted: dict[str, int], index: int, several: bool) -> list[str]:
    """Part ``index`` as lines: header, verdict, then its quotes; a sentence already quoted for
    an earlier part is pointed to, not repeated."""
    lines = [f"{index}. {' '.join(support.part.split())}"] if several else []
    verdict = _verdict_line(support, several)
    if verdict:
        lines.append(verdict)
    quotes = support.quotes[:NEAREST_AT_MOST] if support.verdict is PartVerdict.NEAREST else support.quotes
    pointers: list[str] = []
    shown: list[str] = []
    for quote in quotes:
        if quote.sentence in quoted:
            pointers.append(_POINTER.format(index=quoted[quote.sentence]) + _cited(quote.document_name))
            continue
        quoted[quote.sentence] = index
        shown.append(f"{QUOTE_MARK}{quote.sentence} {_cited(quote.document_name)}")
    # Pointers before the quotes: a plain line right after a block quote would be read as part of it.
    return lines + pointers + shown


def _value_cited(value: Value) -> str:
    name = value.quote.document_name.strip().removeprefix("《").removesuffix("》")
    return f"{value.thing}（{value.written}，《{name}》）"


def comparison_line(compared: Comparison | None) -> str:
    """The comparison the question asks, worked out from the quotes, or what could not be
    compared; "" when it asks none."""
    if compared is None:
        return ""
    larger, smaller = compared.larger, compared.smaller
    if larger is None or smaller is None:
        return COMPARE_UNPAIRED
    if compared.reason == "units":
        return f"无法比较：所引资料中{_value_cited(larger)}与{_value_cited(smaller)}的单位不同。"
    if compared.reason == "equal":
        return f"{COMPARED_LEAD}{_value_cited(larger)}与{_value_cited(smaller)}相同。"
    return f"{COMPARED_LEAD}{_value_cited(larger)}比{_value_cited(smaller)}多{compared.difference}。"


def answer_pieces(question: str, has_evidence: bool, supports: Sequence[PartSupport]) -> list[str]:
    """The answer as stream chunks, a line each: the notice, then one block per part."""
    if not has_evidence:
        return [OFFLINE_LABEL + "\n\n", NO_EVIDENCE + question]
    if not supports:
        supports = [PartSupport(question, (), verified=False)]
    several = len(supports) > 1
    quoted: dict[str, int] = {}
    blocks = [_part_block(s, quoted, i, several) for i, s in enumerate(supports, start=1)]
    compared = comparison_line(compare(question, supports))
    if compared:
        blocks.append([compared])
    lines: list[str] = []
    for block in (b for b in blocks if b):
        if lines:
            lines[-1] += "\n"  # a blank line between parts
        lines.extend(block)
    return [OFFLINE_LABEL + "\n\n"] + [line + "\n" for line in lines[:-1]] + lines[-1:]


def without_label(answer: str) -> str:
    """The answer without the notice it opens with (the current one or an earlier version's):
    where the record already says which model answered, the notice says nothing new."""
    for label in (OFFLINE_LABEL, *FORMER_LABELS):
        if answer.startswith(label):
            return answer[len(label) :].lstrip("\n")
    return answer


def summary_lines(answer: str) -> list[str]:
    """The lines of an answer that say something, for a summary of it: without the notice, part
    headers, pointers to an earlier part's quote and blank lines; quotes without their quote
    mark, citations kept; a verdict names its part, since its header is left out."""
    lines = []
    part = ""
    for raw in without_label(answer).splitlines():
        line = raw.strip()
        if _PART_HEADER.match(line):
            part = _PART_HEADER.sub("", line)
            continue
        if not line or _POINTER_LINE.match(line):
            continue
        for lead in _LEADS:
            if part and line.startswith(lead + _THIS_PART):
                line = f"{lead}“{_bare(part)}”{line.removeprefix(lead + _THIS_PART)}"
        lines.append(line.removeprefix(QUOTE_MARK.strip()).strip())
    return lines


def unverified_parts(answer: str) -> str:
    """The lines of an offline answer that name the parts it could not verify (only the closest
    passages, or nothing in the documents), each part's header with its verdict ("" if every
    part was verified)."""
    named: list[str] = []
    header = ""
    for line in answer.splitlines():
        if _PART_HEADER.match(line):
            header = line
        elif not line.strip():
            header = ""
        elif line.startswith(_LEADS):
            named.append(f"{header}\n{line}" if header else line)
    return "\n".join(named)
