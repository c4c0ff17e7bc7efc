"""Questions attached to paragraphs over HTTP (MaxKB's ``…/paragraph/{id}/problem`` routes): an
attached question brings its paragraph to the top of a search in the asker's own words, named
in the hit; it follows its paragraph (disabled, re-imported unchanged, deleted); and bad input is
refused in words with nothing stored."""

from __future__ import annotations

from typing import Any

import httpx

from tests.document_jobs import wait_for_documents
from tests.harness import Stack

PARAGRAPHS = [
    {"title": "护理假", "content": "员工配偶生育的，男方享受护理假十五天，护理假期间工资照发。"},
    {"title": "婚假", "content": "依法登记结婚的员工享受婚假三天，再婚的同样享受。"},
    {"title": "年休假", "content": "员工累计工作满一年不满十年的，年休假五天；满十年不满二十年的，年休假十天。"},
]
ASKED = "老婆刚生了娃，当爹的能歇几天？"
QUESTION_KEYS = ["id", "content", "dataset_id", "document_id", "paragraph_id"]


async def json_document(client: httpx.AsyncClient, dataset_id: str, paragraphs: list[dict[str, str]]) -> dict[str, Any]:
    answer = await client.post(
        f"/api/dataset/{dataset_id}/document", json={"name": "假期制度", "paragraphs": paragraphs}
    )
    assert answer.status_code == 200, answer.text
    documents = await wait_for_documents(client, dataset_id)
    assert [d["status"] for d in documents] == ["ready"], documents
    return documents[0]


async def hits(client: httpx.AsyncClient, dataset_id: str, query: str = ASKED) -> list[dict[str, Any]]:
    answer = await client.get(
        f"/api/dataset/{dataset_id}/hit_test", params={"query_text": query, "similarity": 0, "top_number": 2}
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"])


async def test_an_attached_question_brings_its_paragraph_and_follows_it(stack: Stack, unique: str) -> None:
    async with stack.http() as client:
        dataset_id = str((await client.post("/api/dataset", json={"name": f"问题-{unique}"})).json()["data"]["id"])
        document = await json_document(client, dataset_id, PARAGRAPHS)
        base = f"/api/dataset/{dataset_id}/document/{document['id']}/paragraph"
        records = (await client.get(f"{base}/1/10")).json()["data"]["records"]
        leave = next(p for p in records if p["title"] == "护理假")
        assert not any("matched_question" in h for h in await hits(client, dataset_id))

        attached = await client.post(f"{base}/{leave['id']}/problem", json={"content": f"  {ASKED} "})
        assert attached.status_code == 200, attached.text
        question = attached.json()["data"]
        assert list(question) == QUESTION_KEYS
        assert (question["content"], question["paragraph_id"]) == (ASKED, leave["id"])
        again = await client.post(f"{base}/{leave['id']}/problem", json={"content": ASKED})
        assert again.json()["data"]["id"] == question["id"], "the same question is not attached twice"

        top = (await hits(client, dataset_id))[0]
        assert (top["id"], top["matched_question"]) == (leave["id"], ASKED)
        assert top["similarity"] > 0.96
        listed_answer = await client.get(f"{base}/{leave['id']}/problem")
        assert listed_answer.status_code == 200, listed_answer.text
        listed = listed_answer.json()["data"]
        assert [q["id"] for q in listed] == [question["id"]]
        whole = (await client.get(f"/api/dataset/{dataset_id}/document/{document['id']}/problem")).json()["data"]
        assert [q["id"] for q in whole] == [question["id"]]

        # Disabled: the question no longer brings it; enabled again: it does.
        await client.put(f"{base}/{leave['id']}", json={"is_active": False})
        assert leave["id"] not in [h["id"] for h in await hits(client, dataset_id)]
        await client.put(f"{base}/{leave['id']}", json={"is_active": True})
        assert (await hits(client, dataset_id))[0].get("matched_question") == ASKED

        # Edited: the new wording matches, the old one no longer does.
        edited = await client.put(f"/api/dataset/{dataset_id}/problem/{question['id']}", json={"content": "陪产假几天"})
        assert edited.status_code == 200 and edited.json()["data"]["content"] == "陪产假几天"
        assert not any(h.get("matched_question") for h in await hits(client, dataset_id))
        assert (await hits(client, dataset_id, "陪产假几天"))[0]["matched_question"] == "陪产假几天"
        await client.put(f"/api/dataset/{dataset_id}/problem/{question['id']}", json={"content": ASKED})

        # The same document imported again keeps the paragraph, and so its question.
        await json_document(client, dataset_id, PARAGRAPHS)
        assert [q["id"] for q in (await client.get(f"{base}/{leave['id']}/problem")).json()["data"]] == [question["id"]]
        assert (await hits(client, dataset_id))[0]["matched_question"] == ASKED

        # Detached: gone from the list and from searches.
        url = f"{base}/{leave['id']}/problem/{question['id']}/un_association"
        assert (await client.put(url)).json()["data"] is True
        assert (await client.get(f"{base}/{leave['id']}/problem")).json()["data"] == []
        assert not any(h.get("matched_question") for h in await hits(client, dataset_id))

        # Deleting the paragraph deletes its questions.
        kept = (await client.post(f"{base}/{leave['id']}/problem", json={"content": ASKED})).json()["data"]
        assert (await client.delete(f"{base}/{leave['id']}")).status_code == 200
        assert (await client.get(f"/api/dataset/{dataset_id}/document/{document['id']}/problem")).json()["data"] == []
        gone = await client.delete(f"/api/dataset/{dataset_id}/problem/{kept['id']}")
        assert gone.status_code == 404 and "does not exist" in gone.json()["message"]


async def test_questions_are_refused_in_words_and_nothing_is_stored(stack: Stack, unique: str) -> None:
    async with stack.http() as client:
        dataset_id = str((await client.post("/api/dataset", json={"name": f"问题坏-{unique}"})).json()["data"]["id"])
        document = await json_document(client, dataset_id, PARAGRAPHS[:1])
        base = f"/api/dataset/{dataset_id}/document/{document['id']}/paragraph"
        [paragraph] = (await client.get(f"{base}/1/10")).json()["data"]["records"]
        url = f"{base}/{paragraph['id']}/problem"
        for body, words in (
            ({"content": "问" * 5000}, "content"),
            ({"content": "问" * 257}, "content"),
            ({"content": "   "}, "some text"),
            ({"content": ""}, "content"),
            ({}, "content"),
            ({"content": ["a", "b"]}, "content"),
        ):
            answer = await client.post(url, json=body)
            assert answer.status_code == 400 and words in answer.json()["message"], (body, answer.text)
        missing = await client.post(f"{base}/00000000-0000-4000-8000-000000000000/problem", json={"content": "几天？"})
        assert missing.status_code == 404 and "does not exist" in missing.json()["message"]
        not_uuid = await client.post(f"{base}/not-a-paragraph/problem", json={"content": "几天？"})
        assert not_uuid.status_code == 404
        assert (await client.get(url)).json()["data"] == []

        for n in range(100):
            assert (await client.post(url, json={"content": f"第{n}个问法：护理假几天？"})).status_code == 200
        over = await client.post(url, json={"content": "第一百零一个问法？"})
        assert over.status_code == 400 and "100 questions" in over.json()["message"]
        assert len((await client.get(url)).json()["data"]) == 100
        bad_edit = await client.put(f"/api/dataset/{dataset_id}/problem/not-an-id", json={"content": "几天？"})
        assert bad_edit.status_code == 404


async def test_a_dataset_exports_with_its_questions_and_imports_back_the_same(stack: Stack, unique: str) -> None:
    async with stack.http() as client:
        source = str((await client.post("/api/dataset", json={"name": f"导出-{unique}"})).json()["data"]["id"])
        document = await json_document(client, source, PARAGRAPHS)
        base = f"/api/dataset/{source}/document/{document['id']}/paragraph"
        records = (await client.get(f"{base}/1/10")).json()["data"]["records"]
        leave = next(p for p in records if p["title"] == "护理假")
        for question in (ASKED, "陪产假几天"):
            assert (await client.post(f"{base}/{leave['id']}/problem", json={"content": question})).status_code == 200

        exported = await client.get(f"/api/dataset/{source}/export")
        assert exported.status_code == 200, exported.text
        assert exported.headers["content-type"].startswith("application/vnd.openxmlformats")
        target = str((await client.post("/api/dataset", json={"name": f"导入-{unique}"})).json()["data"]["id"])
        uploaded = await client.post(f"/api/dataset/{target}/document", files={"file": ("导出.xlsx", exported.content)})
        assert uploaded.status_code == 200, uploaded.text
        [imported] = await wait_for_documents(client, target)
        assert imported["status"] == "ready", imported

        again = f"/api/dataset/{target}/document/{imported['id']}/paragraph"
        copied = (await client.get(f"{again}/1/10")).json()["data"]["records"]
        assert [(p["title"], p["content"]) for p in copied] == [(p["title"], p["content"]) for p in records]
        questions = (await client.get(f"/api/dataset/{target}/document/{imported['id']}/problem")).json()["data"]
        copied_leave = next(p for p in copied if p["title"] == "护理假")
        assert sorted((q["paragraph_id"], q["content"]) for q in questions) == sorted(
            (copied_leave["id"], q) for q in (ASKED, "陪产假几天")
        )
        assert (await hits(client, target))[0]["matched_question"] == ASKED
