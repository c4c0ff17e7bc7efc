"""Which paragraphs of a document's new version it already has: a changed upload embeds only
what changed.

A paragraph's vector depends on nothing but the text the store indexes (document name, title
and content), so a new version's paragraph with the same three as a served one needs no
embedding: the served point is kept, with its id (what the API, the log and votes refer to)
and its enabled state, and only moves if its place in the document changed. Repeated texts are
matched in document order, one served point for one new paragraph.

Points already of the new version come first: they are what an earlier attempt of the same
job kept or published before its process died, so the attempt that resumes keeps them again
instead of embedding their texts a second time.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from services.retrieval.ingestion.splitter import SplitParagraph
from services.retrieval.store.base import StoredParagraph, Unchanged


@dataclass(frozen=True)
class KeptParagraphs:
    """The new version's paragraphs that keep a served point: by new position, that point."""

    by_position: dict[int, StoredParagraph] = field(default_factory=dict)

    def unchanged(self) -> Unchanged:
        """What publishing needs: the kept ids, and the new position of those that moved."""
        return Unchanged(
            ids=frozenset(p.id for p in self.by_position.values()),
            moved={p.id: position for position, p in self.by_position.items() if p.position != position},
        )


def kept_paragraphs(
    paragraphs: Sequence[SplitParagraph], served: Sequence[StoredParagraph], document_name: str, version: int
) -> KeptParagraphs:
    """Each new paragraph whose text a served point of the document already indexes, matched to
    that point (the new version's own points first, then by position)."""
    waiting: defaultdict[tuple[str, str], deque[StoredParagraph]] = defaultdict(deque)
    for point in sorted(served, key=lambda p: (p.version != version, p.position, p.id)):
        if point.document_name == document_name:
            waiting[(point.title, point.content)].append(point)
    kept: dict[int, StoredParagraph] = {}
    for position, paragraph in enumerate(paragraphs):
        candidates = waiting.get((paragraph.title, paragraph.content))
        if candidates:
            kept[position] = candidates.popleft()
    return KeptParagraphs(kept)
