"""Document versions and paragraph states on both backends: a staged version is invisible (to
every search mode and to keyword statistics) until published, publishing replaces the previous
version, disabled paragraphs are never retrieved, and points stored before versions existed
are adopted as published version 0."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
import qdrant_edge as qe
from qdrant_client import AsyncQdrantClient
from qdrant_client.http import models as qm

from services.retrieval.store import layout
from services.retrieval.store.base import Hit, ParagraphPoint, SearchMode, SearchQuery, StoredParagraph, VectorStore
from services.retrieval.store.edge_store import DENSE_DATATYPE, EdgeVectorStore, _config
from services.retrieval.store.qdrant_server import QdrantServerStore
from tests.contract.conftest import BACKENDS, DIMENSION, Corpus, document_id, open_backend

pytestmark = pytest.mark.asyncio(loop_scope="session")

LEAVE = document_id("xinglan_leave_policy.md")
PROBE_TEXT = "年休假 病假工资 474.05 报销"
REWRITTEN = "本段已改写：病假待遇待定。"
UNKNOWN = "00000000-0000-4000-8000-000000000000"
# What a point carried before versions: no version, published, enabled or searchable_in.
LEGACY_FIELDS = ("dataset_id", "document_id", "document_name", "title", "content", "position")


def query(text: str, vector: Sequence[float] | None, mode: SearchMode, *, limit: int = 10) -> SearchQuery:
    return SearchQuery(("hr", "gov"), text, vector, mode, limit, -1.0)


def probes(vector: Sequence[float], limit: int) -> list[SearchQuery]:
    return [query(PROBE_TEXT, vector, mode, limit=limit) for mode in SearchMode]


async def scored(store: VectorStore, probe: SearchQuery) -> dict[str, float]:
    return {h.id: h.score for h in await store.search(probe)}


async def hit_ids(store: VectorStore, probe: SearchQuery) -> set[str]:
    return {h.id for h in await store.search(probe)}


def version_of(points: Sequence[ParagraphPoint], version: int, *, searchable: bool = False) -> list[ParagraphPoint]:
    """The same paragraphs as another version: new ids, as ingestion must give them, staged by default."""
    return [
        dataclasses.replace(
            p, id=str(uuid.uuid5(uuid.UUID(p.id), f"v{version}")), version=version, searchable=searchable
        )
        for p in points
    ]


def rewritten(points: list[ParagraphPoint]) -> tuple[list[ParagraphPoint], ParagraphPoint]:
    """The points with the sick-pay paragraph rewritten, and that paragraph."""
    index = next(i for i, p in enumerate(points) if "病假工资" in p.content)
    changed = dataclasses.replace(points[index], content=REWRITTEN)
    return [*points[:index], changed, *points[index + 1 :]], changed


def stored(point: ParagraphPoint) -> StoredParagraph:
    return StoredParagraph(
        id=point.id,
        dataset_id=point.dataset_id,
        document_id=point.document_id,
        document_name=point.document_name,
        title=point.title,
        content=point.content,
        position=point.position,
        version=point.version,
        enabled=point.enabled,
    )


async def test_staged_points_are_invisible_and_leave_scores_unchanged(store: VectorStore, corpus: Corpus) -> None:
    vector = corpus.points[0].vector
    before = [await scored(store, p) for p in probes(vector, len(corpus.points))]
    staged = version_of(corpus.in_document(LEAVE), 1) + version_of(corpus.in_dataset("gov"), 1)
    await store.upsert(staged)
    assert await store.count() == len(corpus.points) + len(staged)  # count sees staged points
    after = [await scored(store, p) for p in probes(vector, len(corpus.points))]
    for old, new in zip(before, after, strict=True):
        assert old.keys() == new.keys()
        for hit_id, score in old.items():  # scoped IDF counts searchable points only
            assert new[hit_id] == pytest.approx(score, rel=1e-6)


async def test_publish_makes_the_version_searchable_and_deletes_the_others(store: VectorStore, corpus: Corpus) -> None:
    staged, changed = rewritten(version_of(corpus.in_document(LEAVE), 1))
    await store.upsert(staged)
    assert await store.search(query("待定", None, SearchMode.KEYWORD)) == []

    await store.publish_version("hr", LEAVE, 1)
    hits = await store.search(query("待定", None, SearchMode.KEYWORD))
    assert [(h.id, h.version) for h in hits] == [(changed.id, 1)]
    assert await store.count("hr", LEAVE) == len(staged)
    assert await store.document_paragraphs("hr", LEAVE, 0) == []
    for probe in probes(changed.vector, 50):
        leave_hits = [h for h in await store.search(probe) if h.document_id == LEAVE]
        assert leave_hits and {h.version for h in leave_hits} == {1}, probe.mode
    await store.publish_version("hr", LEAVE, 1)  # idempotent: a resumed job may publish twice
    assert await store.count("hr", LEAVE) == len(staged)


async def test_drop_version_removes_only_that_version(store: VectorStore, corpus: Corpus) -> None:
    staged = version_of(corpus.in_document(LEAVE), 1)
    await store.upsert(staged)
    await store.drop_version("hr", LEAVE, 1)
    assert await store.count() == len(corpus.points)
    assert await store.existing_ids([p.id for p in staged]) == set()
    assert len(await store.document_paragraphs("hr", LEAVE, 0)) == len(corpus.in_document(LEAVE))
    await store.drop_version("gov", LEAVE, 0)  # another dataset's document of that id: nothing
    assert await store.count("hr", LEAVE) == len(corpus.in_document(LEAVE))


async def test_existing_ids_tells_which_points_are_stored(store: VectorStore, corpus: Corpus) -> None:
    known = [p.id for p in corpus.points[:3]]
    upper = corpus.points[3].id.upper()  # returned as given, though stored in canonical form
    assert await store.existing_ids([*known, UNKNOWN, upper]) == {*known, upper}
    assert await store.existing_ids([]) == set()
    everything = [p.id for p in corpus.points] * (layout.READ_BATCH // len(corpus.points) + 1)
    assert await store.existing_ids(everything) == {p.id for p in corpus.points}  # several batches


async def test_document_paragraphs_lists_one_version_in_position_order(store: VectorStore, corpus: Corpus) -> None:
    staged = version_of(corpus.in_document(LEAVE), 1)
    await store.upsert(list(reversed(staged)))
    listed = await store.document_paragraphs("hr", LEAVE, 1)
    assert listed == [stored(p) for p in sorted(staged, key=lambda p: p.position)]
    current = await store.document_paragraphs("hr", LEAVE, 0)
    assert current == [stored(p) for p in sorted(corpus.in_document(LEAVE), key=lambda p: p.position)]
    assert await store.document_paragraphs("gov", LEAVE, 0) == []
    assert await store.paragraph(staged[2].id) == stored(staged[2])
    assert await store.paragraph(UNKNOWN) is None
    assert await store.paragraph("not-a-uuid") is None


async def test_disabled_paragraphs_are_never_retrieved(store: VectorStore, corpus: Corpus) -> None:
    target = next(p for p in corpus.points if "474.05" in p.content)
    searches = [query("474.05", target.vector, mode) for mode in SearchMode]
    for search in searches:
        assert target.id in await hit_ids(store, search), search.mode

    await store.set_enabled("gov", [target.id], False)
    for search in searches:
        assert target.id not in await hit_ids(store, search), search.mode
    assert await store.paragraph(target.id) == dataclasses.replace(stored(target), enabled=False)
    assert await store.count() == len(corpus.points)  # disabled, not deleted

    await store.set_enabled("hr", [target.id], True)  # not that dataset's paragraph: ignored
    assert target.id not in await hit_ids(store, searches[0])
    await store.set_enabled("gov", [target.id], True)
    for search in searches:
        assert target.id in await hit_ids(store, search), search.mode
    await store.set_enabled("gov", [], False)


async def test_enabling_a_staged_paragraph_does_not_publish_it(store: VectorStore, corpus: Corpus) -> None:
    staged, changed = rewritten(version_of(corpus.in_document(LEAVE), 1))
    hidden = next(p for p in staged if p.id != changed.id)
    staged = [dataclasses.replace(p, enabled=False) if p.id == hidden.id else p for p in staged]
    await store.upsert(staged)
    await store.set_enabled("hr", [changed.id], False)
    await store.set_enabled("hr", [changed.id], True)
    assert await store.search(query("待定", None, SearchMode.KEYWORD)) == []

    await store.publish_version("hr", LEAVE, 1)
    assert [h.id for h in await store.search(query("待定", None, SearchMode.KEYWORD))] == [changed.id]
    # Disabled while staged: published disabled, and searchable once enabled.
    vector_search = query("", hidden.vector, SearchMode.VECTOR, limit=len(corpus.points))
    assert hidden.id not in await hit_ids(store, vector_search)
    assert (await store.paragraph(hidden.id)) == dataclasses.replace(stored(hidden), enabled=False)
    await store.set_enabled("hr", [hidden.id], True)
    assert hidden.id in await hit_ids(store, vector_search)


async def test_delete_points_removes_exactly_those(store: VectorStore, corpus: Corpus) -> None:
    gone = corpus.in_document(LEAVE)[:2]
    await store.delete_points([p.id for p in gone] + [UNKNOWN])
    assert await store.count() == len(corpus.points) - 2
    assert await store.existing_ids([p.id for p in corpus.points]) == {p.id for p in corpus.points} - {
        p.id for p in gone
    }
    for point in gone:
        assert point.id not in await hit_ids(store, query("", point.vector, SearchMode.VECTOR))
    await store.delete_points([])
    assert await store.count() == len(corpus.points) - 2


async def test_hits_of_an_older_version_give_way_to_a_newer_one(store: VectorStore, corpus: Corpus) -> None:
    """Both versions searchable, as between publish's two writes: only the newer one answers."""
    newer = version_of(corpus.in_document(LEAVE), 2, searchable=True)
    await store.upsert(newer)
    for probe in probes(newer[0].vector, 30):
        leave_hits = [h for h in await store.search(probe) if h.document_id == LEAVE]
        assert leave_hits and {h.version for h in leave_hits} == {2}, probe.mode


def hit(document: str, version: int, score: float, dataset: str = "hr") -> Hit:
    return Hit(f"{document}-{version}-{score}", dataset, document, document, "", "", 0, score, version)


async def test_ranked_drops_hits_of_older_versions_of_the_same_document() -> None:
    hits = [hit("a", 1, 0.9), hit("a", 2, 0.5), hit("b", 0, 0.7), hit("a", 1, 0.8, dataset="gov")]
    assert [h.id for h in layout.ranked(hits, 10)] == ["a-1-0.8", "b-0-0.7", "a-2-0.5"]
    assert [h.id for h in layout.ranked(hits, 1)] == ["a-1-0.8"]


def legacy_payload(point: ParagraphPoint) -> dict[str, object]:
    return {k: v for k, v in layout.payload(point).items() if k in LEGACY_FIELDS}


async def write_legacy_edge(path: Path, points: Sequence[ParagraphPoint]) -> None:
    """Points as the edge store wrote them before versions, straight into the shard."""
    await (await EdgeVectorStore.open(path, DIMENSION)).close()
    shard = qe.EdgeShard.load(str(path), _config(DIMENSION, DENSE_DATATYPE))
    raw = []
    for p in points:
        terms = layout.keyword_terms(p)
        vectors: dict[str, list[float] | list[list[float]] | qe.SparseVector] = {
            layout.DENSE: list(p.vector),
            layout.SPARSE: qe.SparseVector(indices=list(terms.indices), values=list(terms.values)),
        }
        raw.append(qe.Point(layout.point_id(p.id), vectors, legacy_payload(p)))
    shard.update(qe.UpdateOperation.upsert_points(raw))
    shard.flush()
    shard.close()


async def write_legacy_server(client: AsyncQdrantClient, points: Sequence[ParagraphPoint]) -> None:
    await QdrantServerStore(client, dimension=DIMENSION).ensure_collection()
    raw = []
    for p in points:
        terms = layout.keyword_terms(p)
        vectors: dict[str, qm.Vector] = {
            layout.DENSE: list(p.vector),
            layout.SPARSE: qm.SparseVector(indices=list(terms.indices), values=list(terms.values)),
        }
        raw.append(qm.PointStruct(id=layout.point_id(p.id), vector=vectors, payload=legacy_payload(p)))
    await client.upsert("kb_paragraphs", raw, wait=True)


async def reopen_with_legacy(kind: str, tmp_path: Path, points: Sequence[ParagraphPoint]) -> VectorStore:
    if kind == "edge":
        await write_legacy_edge(tmp_path / "legacy", points)
        return await EdgeVectorStore.open(tmp_path / "legacy", DIMENSION)
    client = AsyncQdrantClient(location=":memory:")
    await write_legacy_server(client, points)
    return QdrantServerStore(client, dimension=DIMENSION)


@pytest.mark.parametrize("kind", BACKENDS)
async def test_points_stored_before_versions_are_adopted(kind: str, tmp_path: Path, corpus: Corpus) -> None:
    legacy = await reopen_with_legacy(kind, tmp_path, corpus.in_dataset("gov"))
    fresh = await open_backend(kind, tmp_path / "fresh")
    try:
        await legacy.upsert(corpus.in_dataset("hr"))
        await fresh.upsert(corpus.points)
        # Adopted points search and score exactly like points written today (fused scores are
        # compared by their hits only: rank ties fall by insertion order, which differs here).
        for probe in probes(corpus.in_dataset("gov")[0].vector, len(corpus.points)):
            found, expected = await scored(legacy, probe), await scored(fresh, probe)
            assert found.keys() == expected.keys(), probe.mode
            if probe.mode is not SearchMode.HYBRID:
                assert found == pytest.approx(expected, rel=1e-6), probe.mode
        gov_document = corpus.in_dataset("gov")[0].document_id
        assert await legacy.document_paragraphs("gov", gov_document, 0) == await fresh.document_paragraphs(
            "gov", gov_document, 0
        )
        await legacy.publish_version("gov", gov_document, 0)  # a version-0 document publishes too
        assert await legacy.count() == len(corpus.points)
    finally:
        await legacy.close()
        await fresh.close()
