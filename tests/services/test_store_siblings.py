"""Each embedding model's store beside the default one, on both backends: another
vector size, points that never show in the default store, the default store left where it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.retrieval.store.base import ParagraphPoint, SearchMode, SearchQuery, VectorStore
from services.retrieval.store.edge_store import EdgeVectorStore
from services.retrieval.store.qdrant_server import QdrantServerStore
from services.retrieval.store.siblings import open_sibling, slug

POINT_ID = "00000000-0000-0000-0000-000000000001"


def point(dimension: int) -> ParagraphPoint:
    vector = [0.0] * dimension
    vector[0] = 1.0
    return ParagraphPoint(POINT_ID, "ds", "doc", "制度", "年假", "每年五天年假。", 0, vector)


async def open_default(kind: str, tmp_path: Path) -> VectorStore:
    if kind == "edge":
        return await EdgeVectorStore.open(tmp_path / "qdrant-edge", 384)
    return await QdrantServerStore.open(location=":memory:", dimension=384)


@pytest.mark.parametrize("kind", ["edge", "qdrant"])
async def test_a_sibling_store_holds_another_models_vectors_apart(kind: str, tmp_path: Path) -> None:
    default = await open_default(kind, tmp_path)
    sibling, owned = await open_sibling(default, slug("model-1", 64), 64)
    try:
        await sibling.upsert([point(64)])
        hits = await sibling.search(SearchQuery(("ds",), "年假", point(64).vector, SearchMode.VECTOR, 3, 0.0))
        assert [h.id for h in hits] == [POINT_ID]
        assert await default.count("ds") == 0
        with pytest.raises(Exception):  # noqa: B017 - each backend refuses a wrong size its own way
            await default.upsert([point(64)])
        if kind == "edge":
            assert owned and (tmp_path / "qdrant-edge-model-1-64").is_dir()
        else:
            assert not owned  # it shares the default store's client, which the default closes
    finally:
        if owned:
            await sibling.close()
        await default.close()


def test_a_slug_is_safe_for_folders_and_collections() -> None:
    assert slug("../a b/c", 8) == "abc-8"
    assert slug("2f1c8a9e-0000-4000-8000-000000000000", 1536) == "2f1c8a9e-0000-4000-8000-000000000000-1536"
