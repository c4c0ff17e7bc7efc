"""Votes and usage figures over HTTP, MaxKB's shapes: ``PUT …/chat_record/{id}/vote`` with
``vote_status`` "0"/"1"/"-1" for a share-link visitor, an API key and the operator, the vote
shown on the record after it, refusals as clear 4xx; and
``GET …/statistics/chat_record_aggregate_trend`` for the operator."""

from __future__ import annotations

import datetime as dt

from tests.harness import Stack
from tests.sse_client import ask
from tools.seed_demo import DEMO_APPLICATION_ID

QUESTION = "星澜科技员工累计工作满1年不满10年的，年休假有几天？"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def shared_application(stack: Stack, name: str) -> tuple[str, str, str]:
    """A new application on the demo dataset, its share link, and an API key."""
    async with stack.http() as operator:
        demo = (await operator.get(f"/api/application/{DEMO_APPLICATION_ID}")).json()["data"]
        created = await operator.post(
            "/api/application", json={"name": name, "dataset_id_list": demo["dataset_id_list"]}
        )
        app_id = created.json()["data"]["id"]
        link = (await operator.post(f"/api/application/{app_id}/access_token", json={})).json()["data"]["access_token"]
        key = (await operator.post(f"/api/application/{app_id}/api_key")).json()["data"]["secret_key"]
    return app_id, link, key


async def visitor(stack: Stack, link: str) -> str:
    async with stack.http() as anonymous:
        signed_in = await anonymous.post("/api/application/authentication", json={"access_token": link})
    return str(signed_in.json()["data"])


async def answered_record(client, app_id: str) -> tuple[str, str]:
    chat_id = (await client.get(f"/api/application/{app_id}/chat/open")).json()["data"]
    response, frames = await ask(client, chat_id, QUESTION)
    assert response.status_code == 200 and frames[-1].data["is_end"] is True
    records = (await client.get(f"/api/application/{app_id}/chat/{chat_id}/chat_record/1/10")).json()["data"]
    assert records["records"][0]["vote_status"] == "-1" and records["records"][0]["vote_reason"] == ""
    return chat_id, records["records"][0]["id"]


async def test_a_visitor_votes_changes_and_cancels_and_sees_its_vote_on_the_record(stack: Stack, unique: str) -> None:
    app_id, link, _ = await shared_application(stack, f"vote-http-{unique}")
    async with stack.http(headers=bearer(await visitor(stack, link))) as alice:
        chat_id, record_id = await answered_record(alice, app_id)
        record_url = f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}"

        voted = await alice.put(f"{record_url}/vote", json={"vote_status": "1", "reason": "没有说试用期"})
        assert voted.status_code == 200 and voted.json()["data"] == {"vote_status": "1", "vote_reason": "没有说试用期"}
        shown = (await alice.get(record_url)).json()["data"]
        assert (shown["vote_status"], shown["vote_reason"]) == ("1", "没有说试用期")

        changed = await alice.put(f"{record_url}/vote", json={"vote_status": 0})  # MaxKB also takes the number
        assert changed.json()["data"] == {"vote_status": "0", "vote_reason": ""}
        assert (await alice.get(record_url)).json()["data"]["vote_status"] == "0"

        cancelled = await alice.put(f"{record_url}/vote", json={"vote_status": "-1"})
        assert cancelled.json()["data"]["vote_status"] == "-1"
        assert (await alice.get(record_url)).json()["data"]["vote_status"] == "-1"

        for body, words in [
            ({"vote_status": "2"}, "vote_status"),
            ({"vote_status": True}, "vote_status"),
            ({}, "vote_status"),
            ({"vote_status": "1", "reason": "长" * 501}, "at most 500"),
            ({"vote_status": "1", "reason": "x" * 20_000}, "reason"),
        ]:
            refused = await alice.put(f"{record_url}/vote", json=body)
            assert refused.status_code == 400 and words in refused.json()["message"], (body, refused.text)
        bad_id = await alice.put(
            f"/api/application/{app_id}/chat/{chat_id}/chat_record/0/vote", json={"vote_status": "0"}
        )
        assert bad_id.status_code == 400
        assert (await alice.get(record_url)).json()["data"]["vote_status"] == "-1", "nothing refused was written"

    async with stack.http(headers=bearer(await visitor(stack, link))) as bob:
        refused = await bob.put(f"{record_url}/vote", json={"vote_status": "1"})
        assert refused.status_code == 404


async def test_an_api_key_and_the_operator_vote_on_the_same_route_each_once(stack: Stack, unique: str) -> None:
    app_id, _, key = await shared_application(stack, f"vote-key-{unique}")
    other_app, _, other_key = await shared_application(stack, f"vote-other-{unique}")
    async with stack.http(headers=bearer(key)) as client:
        chat_id, record_id = await answered_record(client, app_id)
        record_url = f"/api/application/{app_id}/chat/{chat_id}/chat_record/{record_id}"
        assert (await client.put(f"{record_url}/vote", json={"vote_status": "0"})).status_code == 200
    async with stack.http() as operator:
        assert (
            await operator.put(f"{record_url}/vote", json={"vote_status": "1", "reason": "太长"})
        ).status_code == 200
        # Each reads back its own vote.
        assert (await operator.get(record_url)).json()["data"]["vote_status"] == "1"
        wrong_app = f"/api/application/{other_app}/chat/{chat_id}/chat_record/{record_id}/vote"
        assert (await operator.put(wrong_app, json={"vote_status": "0"})).status_code == 404
    async with stack.http(headers=bearer(key)) as client:
        assert (await client.get(record_url)).json()["data"]["vote_status"] == "0"
    async with stack.http(headers=bearer(other_key)) as stranger:
        assert (await stranger.put(f"{record_url}/vote", json={"vote_status": "1"})).status_code == 404

    today = dt.datetime.now(dt.UTC).date().isoformat()
    trend = f"/api/application/{app_id}/statistics/chat_record_aggregate_trend"
    async with stack.http() as operator:
        days = (await operator.get(trend, params={"start_time": today, "end_time": today})).json()["data"]
    assert len(days) == 1
    [day] = days
    assert (day["day"], day["chat_record_count"], day["answered"]) == (today, 1, 1)
    assert (day["star_num"], day["trample_num"]) == (1, 1)
    assert day["tokens_num"] == day["message_tokens"] + day["answer_tokens"] > 0
    assert day["p50_run_time"] == day["p95_run_time"] > 0
    assert sum(day["stop_reasons"].values()) == 1 and day["mean_rounds"] >= 1


async def test_the_usage_route_refuses_bad_ranges_and_non_operators(stack: Stack, unique: str) -> None:
    app_id, link, key = await shared_application(stack, f"usage-http-{unique}")
    trend = f"/api/application/{app_id}/statistics/chat_record_aggregate_trend"
    async with stack.http() as operator:
        week = await operator.get(trend)
        assert week.status_code == 200 and len(week.json()["data"]) == 7
        assert all(d["chat_record_count"] == 0 and d["insufficient_rate"] == 0.0 for d in week.json()["data"])
        for params, words in [
            ({"start_time": "2026-03-09", "end_time": "2026-03-01"}, "after"),
            ({"start_time": "2020-01-01", "end_time": "2026-01-01"}, "at most 366"),
            ({"start_time": "2026-02-30", "end_time": "2026-03-01"}, "YYYY-MM-DD"),
            ({"start_time": "'; DROP TABLE chat_record; --"}, "YYYY-MM-DD"),
            ({"start_time": "x" * 100}, "start_time"),
        ]:
            refused = await operator.get(trend, params=params)
            assert refused.status_code == 400 and words in refused.json()["message"], (params, refused.text)
        missing = await operator.get("/api/application/no-such-app/statistics/chat_record_aggregate_trend")
        assert missing.status_code == 404
    for token in (key, await visitor(stack, link)):
        async with stack.http(headers=bearer(token)) as caller:
            assert (await caller.get(trend)).status_code == 403
