"""Deleting a dataset with documents (found by the fuzz run of tests/e2e/test_fuzz_http.py):
its documents go first, so no statement deletes rows the database had already cascaded away."""

from __future__ import annotations

import warnings

from sqlalchemy import func, select
from sqlalchemy.exc import SAWarning

from kbcore.db.tables import Dataset, Document
from services.retrieval.catalog.catalog_store import Catalog


async def test_deleting_a_dataset_deletes_its_documents_without_a_row_count_mismatch(sessions, unique: str) -> None:
    catalog = Catalog(sessions)
    dataset = await catalog.create_dataset(f"to-delete-{unique}", "")
    async with sessions.begin() as session:
        session.add_all(Document(dataset_id=dataset.id, name=f"doc-{i}", content_hash="h") for i in range(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SAWarning)  # before: "expected to delete 3 row(s); 0 were matched"
        await catalog.delete_dataset(dataset.id)
    async with sessions() as session:
        assert await session.get(Dataset, dataset.id) is None
        left = await session.scalar(select(func.count()).select_from(Document).where(Document.dataset_id == dataset.id))
    assert left == 0
