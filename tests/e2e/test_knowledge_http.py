"""The gap report and "improve this answer" over HTTP: MaxKB's annotation route writes a
paragraph the same question retrieves at once, with the visitor's question attached to it; the report lists the groups as JSON and CSV;
refusals are clear 4xx (a deleted dataset, another application's record, bad dates)."""

from __future__ import annotations

import csv
import io
from typing import Any

from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID

MISSING_QUESTION = "云岭县体育馆游泳池夏季几点开放？"
IMPROVED = "云岭县体育馆游泳池夏季（6月至9月）每日9:00开放，21:00闭馆。"


async def new_application(client, name: str, dataset_ids: list[str]) -> str:
    created = await client.post("/api/application", json={"name": name, "dataset_id_list": dataset_ids})
    return str(created.json()["data"]["id"])


async def asked(client, app_id: str, question: str) -> tuple[str, str, dict[str, Any]]:
    chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
    response, frames = await ask(client, chat_id, question)
    assert response.status_code == 200 and frames[-1].data["is_end"] is True
    records = (await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
    record = records["records"][0]
    return chat_id, record["id"], record


async def test_an_improvement_over_http_is_found_by_the_same_question(stack: Stack, unique: str) -> None:
    async with stack.http() as operator:
        dataset = (await operator.post("/api/dataset", json={"name": f"改进-{unique}"})).json()["data"]
        app_id = await new_application(operator, f"改进-{unique}", [dataset["id"]])
        chat_id, record_id, record = await asked(operator, app_id, MISSING_QUESTION)
        assert not record.get("paragraph_list")

        url = f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}/dataset/{dataset['id']}/document_id/auto/improve"
        improved = await operator.put(url, json={"content": IMPROVED})
        assert improved.status_code == 200, improved.text
        data = improved.json()["data"]
        assert data["chat_record_id"] == str(record_id) and data["dataset_id"] == dataset["id"]
        paragraphs = (
            await operator.get(f"/api/dataset/{dataset['id']}/document/{data['document_id']}/paragraph/1/10")
        ).json()["data"]
        assert [(p["title"], p["content"]) for p in paragraphs["records"]] == [(MISSING_QUESTION, IMPROVED)]
        questions_url = (
            f"/api/dataset/{dataset['id']}/document/{data['document_id']}/paragraph/{data['paragraph_id']}/problem"
        )
        attached = (await operator.get(questions_url)).json()["data"]
        assert [q["content"] for q in attached] == [MISSING_QUESTION], "the visitor's wording is attached"

        _, _, again = await asked(operator, app_id, MISSING_QUESTION)
        assert data["paragraph_id"] in [p["id"] for p in again["paragraph_list"]]
        assert "21:00" in again["answer_text"]


async def test_improvements_refused_over_http(stack: Stack, unique: str) -> None:
    async with stack.http() as operator:
        doomed = (await operator.post("/api/dataset", json={"name": f"将删-{unique}"})).json()["data"]
        demo = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}")).json()["data"]
        app_id = await new_application(operator, f"改进-{unique}", demo["dataset_id_list"])
        other_id = await new_application(operator, f"别的-{unique}", demo["dataset_id_list"])
        chat_id, record_id, _ = await asked(operator, app_id, "年假有几天？")
        assert (await operator.delete(f"/api/dataset/{doomed['id']}")).status_code == 200

        def url(app: str = app_id, dataset: str = doomed["id"], record: str = str(record_id)) -> str:
            return (
                f"/api/application/{app}/chat/{chat_id}/chat_record/{record}/dataset/{dataset}/document_id/auto/improve"
            )

        deleted = await operator.put(url(), json={"content": "十天。"})
        assert deleted.status_code == 404 and "deleted" in deleted.json()["message"]
        other = await operator.put(url(app=other_id, dataset=demo["dataset_id_list"][0]), json={"content": "十天。"})
        assert other.status_code == 404
        empty = await operator.put(url(dataset=demo["dataset_id_list"][0]), json={"content": " "})
        assert empty.status_code == 400 and "answer" in empty.json()["message"]
        missing_body = await operator.put(url(dataset=demo["dataset_id_list"][0]), json={})
        assert missing_body.status_code == 400 and "content" in missing_body.json()["message"]
        bad_record = await operator.put(url(record="0"), json={"content": "十天。"})
        assert bad_record.status_code in (400, 404)
    async with stack.http(headers={"Authorization": "Bearer application-nonsense"}) as stranger:
        refused = await stranger.put(url(dataset=demo["dataset_id_list"][0]), json={"content": "十天。"})
        assert refused.status_code == 401


async def test_the_gap_report_lists_groups_as_json_and_csv(stack: Stack, unique: str) -> None:
    async with stack.http() as operator:
        demo = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}")).json()["data"]
        app_id = await new_application(operator, f"缺口-{unique}", demo["dataset_id_list"])
        questions = [
            "云岭县体育馆游泳池几点开放？",
            "云岭县体育馆游泳池门票多少钱？",
            "云岭县体育馆的游泳池能办年卡吗？",
        ]
        records = {}
        for question in questions:
            chat_id, record_id, _ = await asked(operator, app_id, question)
            records[str(record_id)] = chat_id

        report = await operator.get(f"/api/application/{app_id}/gap_report")
        assert report.status_code == 200, report.text
        data = report.json()["data"]
        assert data["records"] == 3
        top = data["groups"][0]
        assert top["count"] == 3 and "游泳池" in top["label"]
        assert {e["chat_record_id"]: e["chat_id"] for e in top["examples"]} == records
        assert {e["problem_text"] for e in top["examples"]} == set(questions)

        exported = await operator.get(f"/api/application/{app_id}/gap_report/export")
        assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(exported.content.decode("utf-8-sig"))))
        assert rows[0]["rank"] == "1" and rows[0]["count"] == "3" and rows[0]["label"] == top["label"]
        assert set(rows[0]["example_questions"].splitlines()) == set(questions)

        reversed_range = await operator.get(
            f"/api/application/{app_id}/gap_report", params={"start_time": "2026-03-02", "end_time": "2026-03-01"}
        )
        assert reversed_range.status_code == 400 and "after" in reversed_range.json()["message"]
        too_many = await operator.get(f"/api/application/{app_id}/gap_report", params={"max_groups": 500})
        assert too_many.status_code == 400 and "max_groups" in too_many.json()["message"]
        unknown = await operator.get("/api/application/no-such-app/gap_report")
        assert unknown.status_code == 404
