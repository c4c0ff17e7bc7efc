"""The offline model's answer as a reader sees it: per question part, the quoted sentences
with their documents, what is only the nearest evidence, and what stays unverifiable.

Kept apart from the judging (``support``): this module decides wording and layout only; which
sentence answers which part is decided once, before, and handed in.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbcore.models.base import PartSupport

OFFLINE_LABEL = "（离线抽取式模型：未配置大模型，以下内容直接摘自检索资料）"
NEAREST_LEAD = "（未能确认资料回答了这一部分，以下只是资料中最接近的内容）"
UNVERIFIED_LEAD = "以下部分无法根据资料核实："
UNVERIFIED_TAIL = "检索到的资料中没有能确认它的内容，本回答不作推测。"
_TRAILING_PUNCTUATION = "？?。！!；;，, "


def _bare(part: str) -> str:
    return part.rstrip(_TRAILING_PUNCTUATION)


def _answer_part(support: PartSupport, quoted: dict[str, int], index: int) -> list[str]:
    """Quotes for part ``index``; a sentence already quoted for an earlier part is pointed to, not repeated."""
    pieces: list[str] = []
    for quote in support.quotes:
        if quote.sentence in quoted:
            pieces.append(f"见第{quoted[quote.sentence]}部分所引资料【{quote.document_name}】。")
            continue
        quoted[quote.sentence] = index
        pieces.append(f"{quote.sentence}【{quote.document_name}】")
    return pieces


def answer_pieces(question: str, has_evidence: bool, supports: Sequence[PartSupport]) -> list[str]:
    """The answer as stream chunks: the label, quoted sentences per part, then what stays unverified."""
    pieces = [OFFLINE_LABEL + "\n\n"]
    if not has_evidence:
        pieces.append("未检索到与问题相关的资料，无法根据知识库回答：" + question)
        return pieces
    quoted: dict[str, int] = {}
    unverified: list[str] = []
    for index, support in enumerate(supports, start=1):
        quotes = _answer_part(support, quoted, index)
        if not support.verified:
            unverified.append(_bare(support.part))
        if not quotes:
            continue
        if len(supports) > 1:
            pieces.append(f"{index}. {support.part}\n")
        if not support.verified:
            pieces.append(NEAREST_LEAD)
        pieces.extend(quotes)
        pieces.append("\n\n")
    if unverified:
        pieces.append(UNVERIFIED_LEAD + "；".join(unverified) + "。" + UNVERIFIED_TAIL)
    return _strip_trailing_break(pieces)


def unverified_parts(answer: str) -> str:
    """The closing sentence of an offline answer that names the parts it could not verify ("" if none)."""
    return answer.split(UNVERIFIED_LEAD, 1)[1] if UNVERIFIED_LEAD in answer else ""


def _strip_trailing_break(pieces: list[str]) -> list[str]:
    while pieces and pieces[-1] == "\n\n":
        pieces.pop()
    return pieces
