"""NUL text over HTTP reaches the retrieval service's entry guard now that every server has one:
a dataset's name or description, a JSON document's name or paragraphs, a paragraph edit are
each refused 400 naming the field, on SQLite and PostgreSQL alike (before, on PostgreSQL: 500
"internal error" for the dataset and document names, and a paragraph with a NUL was accepted and
``ready``, failing every answer that cited it)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.document_jobs import wait_for_documents
from tests.harness import Stack


def refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, (field, response.status_code, response.text)
    assert response.json()["message"] == f"{field} must not contain NUL characters", response.text


async def test_nul_in_a_dataset_document_or_paragraph_is_refused_400_naming_the_field(
    stack: Stack, unique: str
) -> None:
    async with stack.http() as client:
        refused(await client.post("/api/dataset", json={"name": "资料\x00库"}), "name")
        refused(await client.post("/api/dataset", json={"name": f"nul-{unique}", "desc": "说\x00明"}), "description")
        created = await client.post("/api/dataset", json={"name": f"nul-{unique}"})
        assert created.status_code == 200, created.text
        dataset_id = created.json()["data"]["id"]
        documents = f"/api/dataset/{dataset_id}/document"
        clean: list[dict[str, Any]] = [{"title": "条款", "content": "锅炉房每天巡检三次。"}]
        refused(await client.post(documents, json={"name": "规\x00定", "paragraphs": clean}), "name")
        with_nul = [{"title": "条款", "content": "锅炉房每天\x00巡检三次。"}]
        refused(
            await client.post(documents, json={"name": "规定", "paragraphs": with_nul}),
            "paragraphs.paragraphs.content",
        )
        added = await client.post(documents, json={"name": "规定", "paragraphs": clean})
        assert added.status_code == 200, added.text
        [document] = await wait_for_documents(client, dataset_id)
        assert document["status"] == "ready", document
        paragraphs = f"{documents}/{document['id']}/paragraph"
        listed = await client.get(f"{paragraphs}/1/10")
        assert listed.status_code == 200, listed.text
        [paragraph] = listed.json()["data"]["records"]
        refused(await client.put(f"{paragraphs}/{paragraph['id']}", json={"content": "改\x00写"}), "content")
        refused(await client.post(paragraphs, json={"title": "新\x00增", "content": "内容"}), "title")
        unchanged = await client.get(f"{paragraphs}/1/10")
        assert unchanged.json()["data"]["records"][0]["content"] == "锅炉房每天巡检三次。"
