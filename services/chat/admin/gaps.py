"""The knowledge-gap report: what the assessment said was missing, and the questions that ended
without sufficient evidence, grouped by meaning and ranked by how many records share a group.

Grouping is the retrieval service's (``GroupTexts``, where the embedder is); this module picks
the texts and turns index groups back into gaps, examples and record links. A record's gaps
are the parts of its question the offline model could not verify, as the visitor asked them
(a part carrying words a rewrite lent it, from an earlier question, is the visitor's question);
for another model, the parts the assessment quoted ("缺少“A”、“B”的资料" names two things,
often from two documents). Each part joins its own group. A record without a usable gap — no evidence at
all, no datasets, a failed assessment — is grouped by its question: the whole question is then
what the knowledge base lacked.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.db.tables import Chat, ChatRecord
from services.chat.admin.days import DayRange
from services.chat.record_details import loaded

# GroupTexts's own bounds: at most this many texts, each clipped to this length.
MAX_TEXTS = 2000
MAX_TEXT_CHARS = 500
MAX_EXAMPLES = 10
MAX_GAPS_SHOWN = 20
# Stop reasons whose "missing" is the loop's fixed sentence, not the assessment's finding.
WITHOUT_FINDING = (common_pb2.STOP_REASON_NO_DATASETS, common_pb2.STOP_REASON_ASSESSMENT_ERROR)
QUOTED = re.compile(r"“([^”]+)”")


@dataclass(frozen=True)
class GapItem:
    """One text to group: a quoted part of a record's gap, or its question."""

    record: ChatRecord
    gap: str  # empty when the question stands for the record

    @property
    def text(self) -> str:
        return (self.gap or self.record.question)[:MAX_TEXT_CHARS]


def gap_parts(result: common_pb2.RetrievalResult, question: str = "") -> list[str]:
    """The parts of a record's question its evidence did not verify, as the visitor asked them
    (the offline model judges each part); otherwise the things the final assessment said were
    missing; [] when it named nothing usable. With the visitor's ``question``, a gap holding
    words the visitor never typed (a rewrite lent it the earlier question's subject, or the
    assessment paraphrased it) is that question: the report counts what visitors asked."""
    if result.sufficient or not result.paragraphs or result.stop_reason in WITHOUT_FINDING:
        return []
    judged = [support.part.strip() for support in result.part_support if not support.verified]
    if any(judged):
        return _as_asked([part for part in judged if part], question)
    missing = result.missing.strip()
    if not missing:
        return []
    quoted = [part.strip() for part in QUOTED.findall(missing) if part.strip()]
    return _as_asked(quoted or [missing], question)


def _as_asked(gaps: Sequence[str], question: str) -> list[str]:
    """Each gap in the visitor's words: itself when every letter of it is the visitor's, else
    the visitor's whole question; each once."""
    asked = _letters(question)
    if not asked:
        return list(dict.fromkeys(gaps))
    return list(dict.fromkeys(gap if _letters(gap) <= asked else question.strip() for gap in gaps))


def _letters(text: str) -> set[str]:
    return {ch for ch in unicodedata.normalize("NFKC", text).lower() if ch.isalnum()}


def insufficient(record: ChatRecord) -> common_pb2.RetrievalResult | None:
    """The record's retrieval result when it ended without sufficient evidence. The column says
    so for records saved since it was added (migration 0007); older ones are read from their details."""
    details = loaded(record.details)
    if not details.HasField("retrieval"):
        return None
    if record.sufficient is None and details.retrieval.sufficient:
        return None
    return details.retrieval


def gap_items(records: Sequence[ChatRecord]) -> tuple[list[GapItem], int]:
    """The texts to group, newest records first, within ``MAX_TEXTS``; and how many records they
    come from."""
    items: list[GapItem] = []
    used = 0
    for record in records:
        result = insufficient(record)
        if result is None:
            continue
        parts = gap_parts(result, record.question)
        found = [GapItem(record, part) for part in parts] if parts else [GapItem(record, "")]
        if len(items) + len(found) > MAX_TEXTS:
            break
        items.extend(found)
        used += 1
    return items, used


async def insufficient_records(
    sessions: async_sessionmaker[AsyncSession], application_id: str, days: DayRange, limit: int
) -> list[ChatRecord]:
    """Records of the range that ended without sufficient evidence (or may have: a record saved
    before the column existed is checked against its details), newest first."""
    query = (
        select(ChatRecord)
        .join(Chat, Chat.id == ChatRecord.chat_id)
        .where(
            Chat.application_id == application_id,
            ChatRecord.created_at >= days.start,
            ChatRecord.created_at < days.end,
            or_(ChatRecord.sufficient.is_(False), ChatRecord.sufficient.is_(None)),
        )
        .order_by(ChatRecord.id.desc())
        .limit(limit)
    )
    async with sessions() as session:
        return list((await session.scalars(query)).all())


def grouping_request(items: Sequence[GapItem]) -> retrieval_pb.GroupTextsRequest:
    return retrieval_pb.GroupTextsRequest(texts=[item.text for item in items])


def report_groups(
    items: Sequence[GapItem], groups: Sequence[retrieval_pb.TextGroup], max_groups: int
) -> list[pb.GapGroup]:
    """Index groups as the report shows them, the most records first (ties: the newest first)."""
    shown = [_group(items, group) for group in groups if group.members]
    # Examples are newest first, so the first one's id says how recent the group is.
    shown.sort(key=lambda g: (-g.count, -int(g.examples[0].record_id)))
    return shown[:max_groups]


def _group(items: Sequence[GapItem], group: retrieval_pb.TextGroup) -> pb.GapGroup:
    members = [items[i] for i in group.members]
    records = {item.record.id for item in members}
    gaps = Counter(item.gap for item in members if item.gap)
    examples: list[pb.GapExample] = []
    seen: set[int] = set()
    for item in sorted(members, key=lambda m: -m.record.id):
        if item.record.id in seen or len(examples) == MAX_EXAMPLES:
            continue
        seen.add(item.record.id)
        examples.append(
            pb.GapExample(
                chat_id=item.record.chat_id,
                record_id=str(item.record.id),
                question=item.record.question,
                gap=item.gap,
                created_at=item.record.created_at.isoformat() + "Z",
            )
        )
    return pb.GapGroup(
        label=items[group.central].text,
        count=len(records),
        gaps=[gap for gap, _ in gaps.most_common(MAX_GAPS_SHOWN)],
        examples=examples,
    )
