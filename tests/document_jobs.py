"""Waiting for uploaded documents over HTTP, as any client does: an upload answers at once with
the document ``queued``, and the document list says when its job has ended."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import httpx
import pytest

from tests.eventually import eventually

RUNNING = frozenset({"queued", "parsing", "embedding"})


async def wait_for_documents(
    client: httpx.AsyncClient,
    dataset_id: str,
    document_ids: Collection[str] | None = None,
    *,
    timeout: float = 120.0,
) -> list[dict[str, Any]]:
    """The dataset's documents (or only these) once none of them is queued, parsing or embedding,
    ready or failed alike: the caller asserts which it expects. Fails the test on timeout, and at
    once when the list is refused or a document is gone."""

    async def documents_now() -> list[dict[str, Any]]:
        listed = await client.get(f"/api/dataset/{dataset_id}/document")
        if listed.status_code != 200:
            pytest.fail(listed.text)
        documents = [d for d in listed.json()["data"] if document_ids is None or d["id"] in document_ids]
        missing = set(document_ids or ()) - {d["id"] for d in documents}
        if missing:
            pytest.fail(f"documents {sorted(missing)} are gone from dataset {dataset_id}")
        return documents

    return await eventually(
        documents_now,
        lambda documents: not any(d["status"] in RUNNING for d in documents),
        timeout=timeout,
        interval=0.1,
        what=f"the end of the document jobs of dataset {dataset_id}",
    )


async def hit_test(client: httpx.AsyncClient, dataset_id: str, query: str) -> list[dict[str, Any]]:
    """The dataset's paragraphs a one-query hit test finds for ``query`` (no similarity floor)."""
    answer = await client.get(f"/api/dataset/{dataset_id}/hit_test", params={"query_text": query, "similarity": 0})
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["data"]
    return found
