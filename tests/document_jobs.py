"""Waiting for uploaded documents over HTTP, as any client does: an upload answers at once with
the document ``queued``, and the document list says when its job has ended."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Collection
from typing import Any

import httpx

RUNNING = frozenset({"queued", "parsing", "embedding"})


async def wait_for_documents(
    client: httpx.AsyncClient,
    dataset_id: str,
    document_ids: Collection[str] | None = None,
    *,
    timeout: float = 120.0,
) -> list[dict[str, Any]]:
    """The dataset's documents (or only these) once none of them is queued, parsing or embedding,
    ready or failed alike: the caller asserts which it expects. Fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        listed = await client.get(f"/api/dataset/{dataset_id}/document")
        assert listed.status_code == 200, listed.text
        documents = [d for d in listed.json()["data"] if document_ids is None or d["id"] in document_ids]
        if document_ids is not None:
            missing = set(document_ids) - {d["id"] for d in documents}
            assert not missing, f"documents {sorted(missing)} are gone from dataset {dataset_id}"
        if not any(d["status"] in RUNNING for d in documents):
            return documents
        assert time.monotonic() < deadline, f"still running after {timeout} s: {documents}"
        await asyncio.sleep(0.1)


async def hit_test(client: httpx.AsyncClient, dataset_id: str, query: str) -> list[dict[str, Any]]:
    """The dataset's paragraphs a one-query hit test finds for ``query`` (no similarity floor)."""
    answer = await client.get(f"/api/dataset/{dataset_id}/hit_test", params={"query_text": query, "similarity": 0})
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["data"]
    return found
