"""A chat of another application answers exactly as a chat id that does not exist, on every route
keyed by a chat id (docs/access.md, "Ownership, one question at a time, stop"): asking, stopping,
reading records, voting, renaming and deleting from the history, improving an answer, and
continuing a chat on the OpenAI-compatible route. Status and body are compared byte for byte, in
both languages, for each kind of outsider bound to application A: a person granted A (an
editor, who may change A and a dataset), A's API key and a share-link visitor of A.

Application B's chat holds a finished record, so every route that would act on it had it been
found (a vote, an improvement, a rename) is asked with ids that exist.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import Chat, ChatRecord, RecordStatus, RecordVote
from tests.harness import Stack

PASSWORD = "outsider-Password-1"
LANGUAGES = ({"Accept-Language": "zh-CN"}, {"Accept-Language": "en"})


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # {app}, {chat}, {record}, {dataset}, {document} filled in
    body: dict[str, Any] | None = None


ROUTES = (
    Route("POST", "/api/application/chat_message/{chat}", {"message": "年假有几天？"}),
    Route("POST", "/api/application/chat_message/{chat}/stop"),
    Route("GET", "/api/application/{app}/chat/{chat}/chat_record/1/20"),
    Route("GET", "/api/application/{app}/chat/{chat}/chat_record/{record}"),
    Route("PUT", "/api/application/{app}/chat/{chat}/chat_record/{record}/vote", {"vote_status": "0"}),
    Route("PUT", "/api/application/{app}/chat/client/{chat}", {"abstract": "taken over"}),
    Route("DELETE", "/api/application/{app}/chat/client/{chat}"),
    Route(
        "PUT",
        "/api/application/{app}/chat/{chat}/chat_record/{record}/dataset/{dataset}/document_id/{document}/improve",
        {"content": "改进后的回答。", "title": "年假"},
    ),
    Route(
        "POST",
        "/api/application/{app}/chat/completions",
        {"model": "{app}", "messages": [{"role": "user", "content": "年假有几天？"}], "chat_id": "{chat}"},
    ),
)


@dataclass(frozen=True)
class Ids:
    app: str  # A, the outsiders'
    chat: str  # B's chat, or an id that does not exist
    record: int
    dataset: str

    def fill(self, text: str) -> str:
        return (
            text.replace("{app}", self.app)
            .replace("{chat}", self.chat)
            .replace("{record}", str(self.record))
            .replace("{dataset}", self.dataset)
            .replace("{document}", str(uuid.UUID(int=0)))
        )


def filled(value: Any, ids: Ids) -> Any:
    if isinstance(value, str):
        return ids.fill(value)
    if isinstance(value, dict):
        return {key: filled(item, ids) for key, item in value.items()}
    if isinstance(value, list):
        return [filled(item, ids) for item in value]
    return value


async def sent(client: httpx.AsyncClient, route: Route, ids: Ids, language: dict[str, str]) -> tuple[int, bytes]:
    body = filled(route.body, ids) if route.body is not None else None
    response = await client.request(route.method, ids.fill(route.path), json=body, headers=language)
    return response.status_code, response.content


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url.path}: {response.text}"
    return response.json()["data"]


@dataclass(frozen=True)
class World:
    a: str
    b: str
    chat_b: str
    record_b: int
    dataset: str
    outsiders: dict[str, str]  # who → their bearer token


async def world_of(stack: Stack, sessions: async_sessionmaker[AsyncSession], unique: str) -> World:
    async with stack.http() as operator, stack.http(anonymous=True) as anonymous:
        a = str(data(await operator.post("/api/application", json={"name": f"outsiders-{unique}"}))["id"])
        b = str(data(await operator.post("/api/application", json={"name": f"theirs-{unique}"}))["id"])
        chat_b = str(data(await operator.get(f"/api/application/{b}/chat/open")))
        dataset = str(data(await operator.post("/api/dataset", json={"name": f"improved-{unique}"}))["id"])
        editor = {
            "username": f"outsider-{unique}",
            "password": PASSWORD,
            "role": "editor",
            "applications": [a],
            "datasets": [dataset],
        }
        data(await operator.post("/api/user_manage", json=editor))
        person = data(
            await anonymous.post("/api/user/login", json={"username": editor["username"], "password": PASSWORD})
        )
        key = data(await operator.post(f"/api/application/{a}/api_key"))["secret_key"]
        link = data(await operator.post(f"/api/application/{a}/access_token", json={"access_num": 100}))
        visitor = data(
            await anonymous.post("/api/application/authentication", json={"access_token": link["access_token"]})
        )
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=chat_b, question="年假有几天？", answer="十天。", status=RecordStatus.ANSWERED)
        session.add(record)
    return World(
        a, b, chat_b, record.id, dataset, {"editor of A": person, "API key of A": key, "visitor of A": visitor}
    )


@pytest.fixture
async def world(stack: Stack, sessions: async_sessionmaker[AsyncSession], unique: str) -> World:
    return await world_of(stack, sessions, unique)


# What each outsider may not use at all, whatever the chat: refused alike before any chat is looked up.
NOT_THEIRS = {
    ("editor of A", "PUT", "/api/application/{app}/chat/client/{chat}"),  # a visitor's own history
    ("editor of A", "DELETE", "/api/application/{app}/chat/client/{chat}"),
    ("API key of A", "PUT", "/api/application/{app}/chat/client/{chat}"),
    ("API key of A", "DELETE", "/api/application/{app}/chat/client/{chat}"),
    ("API key of A", "PUT", ROUTES[7].path),  # improving needs a person who may change a dataset
    ("visitor of A", "PUT", ROUTES[7].path),
}


@pytest.mark.parametrize("who", ["editor of A", "API key of A", "visitor of A"])
async def test_another_applications_chat_answers_as_an_unknown_chat_on_every_route(
    stack: Stack, sessions: async_sessionmaker[AsyncSession], world: World, who: str
) -> None:
    theirs = Ids(world.a, world.chat_b, world.record_b, world.dataset)
    unknown = Ids(world.a, str(uuid.uuid4()), world.record_b, world.dataset)
    async with stack.http(headers={"Authorization": f"Bearer {world.outsiders[who]}"}) as outsider:
        for route in ROUTES:
            for language in LANGUAGES:
                seen = await sent(outsider, route, theirs, language)
                expected = await sent(outsider, route, unknown, language)
                where = f"{who}: {route.method} {route.path} ({language['Accept-Language']})"
                assert seen == expected, f"{where}: {seen!r} differs from an unknown chat's {expected!r}"
                status = 403 if (who, route.method, route.path) in NOT_THEIRS else 404
                assert seen[0] == status, f"{where}: {seen!r}"
    await nothing_done_in(sessions, world)


async def nothing_done_in(sessions: async_sessionmaker[AsyncSession], world: World) -> None:
    """B's chat as it was: its one record, no vote, not renamed nor hidden."""
    async with sessions() as session:
        chat = await session.get(Chat, world.chat_b)
        records = list(await session.scalars(select(ChatRecord).where(ChatRecord.chat_id == world.chat_b)))
        votes = list(await session.scalars(select(RecordVote).where(RecordVote.record_id == world.record_b)))
    assert chat is not None and chat.abstract != "taken over" and chat.hidden_at is None
    assert [(r.id, r.answer) for r in records] == [(world.record_b, "十天。")] and votes == []
