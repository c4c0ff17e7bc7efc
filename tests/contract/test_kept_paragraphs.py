"""A new version that keeps the served paragraphs whose text did not change, on both backends:
publishing makes the kept points (same ids, their enabled state, their new places) and the new
ones the document's one version; a publication undone part-way leaves the served version whole."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from services.retrieval.store.base import ParagraphPoint, SearchMode, StoredParagraph, Unchanged, VectorStore
from tests.contract.conftest import Corpus
from tests.contract.test_versions import LEAVE, REWRITTEN, hit_ids, query, stored

pytestmark = pytest.mark.asyncio(loop_scope="session")

INSERTED = "新增一段：员工生日当天可享半天带薪假。"


@dataclasses.dataclass(frozen=True)
class NewVersion:
    """Version 1 of the leave policy: a paragraph inserted first and one rewritten, the rest kept."""

    staged: list[ParagraphPoint]  # the inserted and the rewritten paragraph, new points
    kept: list[ParagraphPoint]  # the served points it keeps, as they are stored now
    unchanged: Unchanged
    replaced: ParagraphPoint  # the served paragraph the rewrite replaces


def new_version(served: list[ParagraphPoint]) -> NewVersion:
    """Every served paragraph moves one place down; the sick-pay paragraph is rewritten."""
    replaced = next(p for p in served if "病假工资" in p.content)
    first = served[0]
    inserted = dataclasses.replace(
        first, id=str(uuid.uuid5(uuid.UUID(first.id), "inserted")), content=INSERTED, position=0, version=1
    )
    rewrite = dataclasses.replace(
        replaced,
        id=str(uuid.uuid5(uuid.UUID(replaced.id), "v1")),
        content=REWRITTEN,
        position=replaced.position + 1,
        version=1,
    )
    staged = [dataclasses.replace(p, searchable=False) for p in (inserted, rewrite)]
    kept = [p for p in served if p.id != replaced.id]
    unchanged = Unchanged(ids=frozenset(p.id for p in kept), moved={p.id: p.position + 1 for p in kept})
    return NewVersion(staged, kept, unchanged, replaced)


async def leave_points(store: VectorStore, corpus: Corpus) -> list[ParagraphPoint]:
    """The leave policy's points, one of them disabled by an operator (the state a kept point keeps)."""
    points = corpus.in_document(LEAVE)
    await store.set_enabled("hr", [points[1].id], False)
    return [dataclasses.replace(points[1], enabled=False) if p.id == points[1].id else p for p in points]


async def test_publishing_keeps_unchanged_paragraphs_with_their_ids(store: VectorStore, corpus: Corpus) -> None:
    served = await leave_points(store, corpus)
    version = new_version(served)
    await store.upsert(version.staged)
    assert [p.id for p in await store.served_paragraphs("hr", LEAVE)] == [p.id for p in served]  # staged: not served

    await store.publish_version("hr", LEAVE, 1, version.unchanged)

    expected = sorted(
        [stored(dataclasses.replace(p, searchable=True)) for p in version.staged]
        + [stored(dataclasses.replace(p, version=1, position=p.position + 1)) for p in version.kept],
        key=lambda p: p.position,
    )
    assert await store.document_paragraphs("hr", LEAVE, 1) == expected
    assert await store.served_paragraphs("hr", LEAVE) == expected
    assert await store.count("hr", LEAVE) == len(served) + 1
    assert await store.document_paragraphs("hr", LEAVE, 0) == []
    assert version.replaced.id not in await hit_ids(store, query("", version.replaced.vector, SearchMode.VECTOR))
    for text in ("待定", "生日"):
        assert await hit_ids(store, query(text, None, SearchMode.KEYWORD)) <= {p.id for p in version.staged}
        assert await hit_ids(store, query(text, None, SearchMode.KEYWORD)), text
    disabled = served[1]
    assert disabled.id not in await hit_ids(store, query("", disabled.vector, SearchMode.VECTOR, limit=50))
    kept = next(p for p in version.kept[1:] if p.enabled)  # the first lent the inserted one its vector
    leave_hits = [h for h in await store.search(query("", kept.vector, SearchMode.VECTOR)) if h.document_id == LEAVE]
    assert leave_hits[0].id == kept.id and {h.version for h in leave_hits} == {1}

    await store.publish_version("hr", LEAVE, 1, version.unchanged)  # a resumed job publishes again
    assert await store.served_paragraphs("hr", LEAVE) == expected


async def test_an_undone_publication_leaves_the_served_version_whole(store: VectorStore, corpus: Corpus) -> None:
    served = await leave_points(store, corpus)
    before: list[StoredParagraph] = await store.document_paragraphs("hr", LEAVE, 0)
    version = new_version(served)
    await store.upsert(version.staged)
    # Published whole, then undone: what the builder does when publishing fails part-way.
    await store.publish_version("hr", LEAVE, 1, version.unchanged)
    kept_as_read = [p for p in before if p.id in version.unchanged.ids]

    await store.restore_served("hr", LEAVE, 1, kept_as_read)
    await store.drop_version("hr", LEAVE, 1)

    assert await store.document_paragraphs("hr", LEAVE, 0) == [p for p in before if p.id != version.replaced.id]
    assert await store.existing_ids([p.id for p in version.staged]) == set()
    assert await hit_ids(store, query("生日", None, SearchMode.KEYWORD)) == set()
    kept = next(p for p in version.kept[1:] if p.enabled)  # the first lent the inserted one its vector
    leave_hits = [h for h in await store.search(query("", kept.vector, SearchMode.VECTOR)) if h.document_id == LEAVE]
    assert leave_hits[0].id == kept.id and {h.version for h in leave_hits} == {0}
