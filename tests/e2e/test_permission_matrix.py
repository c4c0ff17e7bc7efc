"""The permission matrix over real HTTP: every route the gateway serves × every kind of caller
(docs/access.md, People and roles), each request with real ids (a dataset, document, paragraph,
application, chat and record made for the test) and an empty or minimal body.

What each caller should get is written out by hand per need (``EXPECT``), not computed from the
rule under test, and only its class is compared: refused (401, 403, 404) or not (anything else
below 500; a body the route refuses with 400 counts as let through, since the permission check
runs before the body is read). ``CASES`` lists every route once, and a test fails when the gateway
serves one it does not list.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from kbcore.permissions.roles import Need
from kbcore.permissions.table import ROUTES
from kbcore.rpc.caller_token import operator_token
from tests.document_jobs import wait_for_documents
from tests.harness import READS_ENGLISH, Stack
from tests.permission_expectations import (
    ADMIN,
    ANONYMOUS,
    CALLERS,
    EDITOR,
    EXPECT,
    KEY,
    OTHER,
    PASSWORD,
    VIEWER,
    VISITOR,
    expected_through,
)
from tests.shared_tls import TLS
from tests.sse_client import ask

USERS = {VIEWER: "viewer", OTHER: "editor", EDITOR: "editor", ADMIN: "admin"}
REFUSED = frozenset({401, 403, 404})
QUESTION = "星澜科技员工累计工作满1年不满10年的，年休假有几天？"


@dataclass
class World:
    """What the requests name and who sends them."""

    stack: Stack
    tokens: dict[str, str | None]
    ids: dict[str, str]
    own: dict[str, dict[str, str]]  # per caller: their own chat, record, personal token
    usernames: dict[str, str]
    other_dataset: str

    def client(self, caller: str, token: str | None = None) -> httpx.AsyncClient:
        bearer = token or self.tokens[caller]
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        return httpx.AsyncClient(verify=TLS, base_url=self.stack.url, timeout=120, headers={**headers, **READS_ENGLISH})

    def operator(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            verify=TLS,
            base_url=self.stack.url,
            timeout=120,
            headers={"Authorization": f"Bearer {operator_token(self.stack.settings)}"},
        )


Fresh = Callable[[World, str], Awaitable[dict[str, str]]]


@dataclass(frozen=True)
class Case:
    key: str  # "METHOD /template", as ROUTES lists it
    body: Any = None
    query: dict[str, str] = field(default_factory=dict)
    reaches: bool = False  # the chat service checks the application a request with no object in its path names
    visitors_only: bool = False  # a share-link visitor's own chat list: the chat service refuses everyone else
    fresh: Fresh | None = None  # ids of a thing of its own for a caller expected through (it is used up)


async def data_of(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json()["data"]


async def fresh_dataset(world: World, caller: str) -> dict[str, str]:
    """A dataset the caller made (an editor is granted what they create)."""
    async with world.client(caller) as client:
        made = await data_of(await client.post("/api/dataset", json={"name": f"matrix-gone-{caller}"}))
    return {"dataset_id": made["id"]}


async def fresh_document(world: World, _: str) -> dict[str, str]:
    body = {"name": "matrix-gone", "paragraphs": [{"content": "将被删除的段落。"}]}
    async with world.operator() as operator:
        made = await data_of(await operator.post(f"/api/dataset/{world.ids['dataset_id']}/document", json=body))
    return {"document_id": made["id"]}


async def fresh_paragraph(world: World, _: str) -> dict[str, str]:
    path = f"/api/dataset/{world.ids['dataset_id']}/document/{world.ids['document_id']}/paragraph"
    async with world.operator() as operator:
        made = await data_of(await operator.post(path, json={"content": "将被删除的段落。"}))
    return {"paragraph_id": made["id"]}


async def fresh_question(world: World, caller: str) -> dict[str, str]:
    ids = world.ids
    path = f"/api/dataset/{ids['dataset_id']}/document/{ids['document_id']}/paragraph/{ids['paragraph_id']}/problem"
    async with world.operator() as operator:
        made = await data_of(await operator.post(path, json={"content": f"{caller} 会怎么问年休假？"}))
    return {"problem_id": made["id"]}


async def fresh_chat(world: World, caller: str) -> dict[str, str]:
    opener = world.client(VISITOR) if caller == VISITOR else world.operator()
    async with opener as client:
        chat_id = await data_of(await client.get(f"/api/application/{world.ids['app_id']}/chat/open"))
    return {"chat_id": chat_id}


async def fresh_session(world: World, caller: str) -> dict[str, str]:
    return {"token": await sign_in(world.stack, world.usernames[caller], PASSWORD)}


DS = "/api/dataset/{dataset_id}"
DOC = DS + "/document/{document_id}"
APP = "/api/application/{app_id}"
RECORDS = APP + "/chat/{chat_id}/chat_record"
KEYS = APP + "/api_key"
Q = {"query_text": "年休假"}

CASES: tuple[Case, ...] = (
    Case("GET /api/profile"),
    Case("GET /api/application/embed", query={"token": "abc123"}),
    Case("POST /api/application/authentication", {}),
    Case("POST /api/user/login", {}),
    Case("POST /api/user/signin_link", {}),
    Case("GET /api/application/profile"),
    Case("GET /api/dataset"),
    Case("POST /api/dataset", {}),
    Case(f"PUT {DS}", {}),
    Case("GET /api/dataset/document/upload_rules"),
    Case("POST /api/dataset/document/split", {}),
    Case(f"POST {DS}/document", {}),
    Case(f"GET {DS}/document"),
    Case(f"POST {DS}/document/web", {}),
    Case(f"GET {DOC}"),
    Case(f"PUT {DOC}/cancel_task"),
    Case(f"PUT {DOC}/sync"),
    Case(f"PUT {DS}/sync_web", {}),
    Case(f"GET {DS}/hit_test", query=Q),
    Case(f"GET {DS}/hit_test_rounds", query=Q),
    Case(f"GET {DOC}/paragraph/{{current_page}}/{{page_size}}"),
    Case(f"POST {DOC}/paragraph", {}),
    Case(f"PUT {DOC}/paragraph/{{paragraph_id}}", {}),
    Case(f"GET {DS}/export"),
    Case(f"GET {DOC}/problem"),
    Case(f"GET {DOC}/paragraph/{{paragraph_id}}/problem"),
    Case(f"POST {DOC}/paragraph/{{paragraph_id}}/problem", {}),
    Case(f"PUT {DS}/problem/{{problem_id}}", {}, fresh=fresh_question),
    Case("POST /api/application/chat_message/{chat_id}", {}),
    Case("POST /api/application/chat_message/{chat_id}/stop", reaches=True),
    Case(f"GET {APP}/chat/open"),
    Case(f"GET {RECORDS}/{{page}}/{{size}}"),
    Case(f"GET {RECORDS}/{{record_id}}"),
    Case(f"PUT {RECORDS}/{{record_id}}/vote", {}),
    Case(f"GET {APP}/chat/client/{{page}}/{{size}}", visitors_only=True),
    Case(f"PUT {APP}/chat/client/{{chat_id}}", {"abstract": "renamed"}, visitors_only=True),
    Case(f"POST {APP}/chat/completions", {}),
    Case("POST /v1/chat/completions", {}),
    Case(f"POST {APP}/completions", {}),
    Case("POST /v1/completions", {}),
    Case(f"GET {APP}/models"),
    Case("GET /v1/models"),
    Case(f"GET {APP}/models/{{model}}"),
    Case("GET /v1/models/{model}", reaches=True),
    Case(f"GET {APP}/chat/{{current_page}}/{{page_size}}"),
    Case(f"POST {APP}/chat/export", {}),
    Case(f"GET {APP}/chat/export"),
    Case(f"GET {APP}/statistics/chat_record_aggregate_trend"),
    Case(f"GET {APP}/gap_report"),
    Case(f"GET {APP}/gap_report/export"),
    Case(f"PUT {RECORDS}/{{record_id}}/dataset/{{dataset_id}}/document_id/{{document_id}}/improve", {}),
    Case("GET /api/application"),
    Case("POST /api/application", {}),
    Case(f"GET {APP}"),
    Case(f"PUT {APP}", {}),
    Case(f"POST {APP}/eval", {}),
    Case(f"POST {KEYS}"),
    Case(f"GET {KEYS}"),
    Case(f"PUT {KEYS}/{{api_key_id}}", {}),
    Case(f"POST {KEYS}/{{api_key_id}}/rotate"),
    Case(f"DELETE {KEYS}/{{api_key_id}}"),
    Case(f"POST {APP}/access_token", {}),
    Case(f"GET {APP}/access_token"),
    Case(f"PUT {APP}/access_token", {}),
    Case("GET /api/model"),
    Case("GET /api/model/deployment"),
    Case("POST /api/model", {}),
    Case("PUT /api/model/{model_id}", {}),
    Case("POST /api/model/{model_id}/check"),
    Case("GET /api/user"),
    Case("PUT /api/user/re_password", {}),
    Case("GET /api/user/token"),
    Case("POST /api/user/token", {}),
    Case("DELETE /api/user/token/{token_id}"),
    Case("POST /api/user/logout", fresh=fresh_session),
    Case("GET /api/audit"),
    Case("GET /api/audit/export"),
    Case("GET /api/user_manage"),
    Case("POST /api/user_manage", {}),
    Case("GET /api/user_manage/{current_page}/{page_size}"),
    Case("PUT /api/user_manage/{user_id}", {}),
    Case("PUT /api/user_manage/{user_id}/re_password", {}),
    Case("POST /api/user_manage/{user_id}/signin_link"),
    Case("GET /metrics"),
    # What uses things up last (each caller expected through gets one of its own).
    Case(f"DELETE {APP}/chat/client/{{chat_id}}", fresh=fresh_chat, visitors_only=True),
    Case(f"PUT {DOC}/paragraph/{{paragraph_id}}/problem/{{problem_id}}/un_association", fresh=fresh_question),
    Case(f"DELETE {DS}/problem/{{problem_id}}", fresh=fresh_question),
    Case(f"DELETE {DOC}/paragraph/{{paragraph_id}}", fresh=fresh_paragraph),
    Case(f"DELETE {DOC}", fresh=fresh_document),
    Case(f"DELETE {DS}", fresh=fresh_dataset),
    Case("DELETE /api/model/{model_id}"),
    Case("DELETE /api/user_manage/{user_id}"),
)


def expected_of(case: Case, caller: str) -> bool:
    """The hand-written expectation for ``case`` (``tests.permission_expectations``)."""
    return expected_through(ROUTES[case.key], caller, reaches=case.reaches, visitors_only=case.visitors_only)


# --- the world the requests name ----------------------------------------------------------


async def sign_in(stack: Stack, username: str, password: str) -> str:
    async with httpx.AsyncClient(verify=TLS, base_url=stack.url, timeout=120, headers=READS_ENGLISH) as anonymous:
        token = await data_of(
            await anonymous.post("/api/user/login", json={"username": username, "password": password})
        )
    assert isinstance(token, str) and token.startswith("kbs_")
    return token


async def dataset_with_paragraph(operator: httpx.AsyncClient, name: str) -> dict[str, str]:
    dataset_id = (await data_of(await operator.post("/api/dataset", json={"name": name})))["id"]
    body = {
        "name": "员工手册",
        "paragraphs": [{"title": "年休假", "content": "员工累计工作满1年不满10年的，年休假5天。"}],
    }
    document_id = (await data_of(await operator.post(f"/api/dataset/{dataset_id}/document", json=body)))["id"]
    [document] = await wait_for_documents(operator, dataset_id, [document_id])
    assert document["status"] == "ready", document
    page = await data_of(await operator.get(f"/api/dataset/{dataset_id}/document/{document_id}/paragraph/1/10"))
    return {"dataset_id": dataset_id, "document_id": document_id, "paragraph_id": page["records"][0]["id"]}


async def application_with_keys(operator: httpx.AsyncClient, name: str, dataset_id: str) -> dict[str, str]:
    app_id = (
        await data_of(await operator.post("/api/application", json={"name": name, "dataset_id_list": [dataset_id]}))
    )["id"]
    key = await data_of(await operator.post(f"/api/application/{app_id}/api_key"))
    spare = await data_of(await operator.post(f"/api/application/{app_id}/api_key"))
    link = await data_of(await operator.post(f"/api/application/{app_id}/access_token", json={}))
    return {"app_id": app_id, "key": key["secret_key"], "api_key_id": spare["id"], "link": link["access_token"]}


async def chat_with_record(client: httpx.AsyncClient, app_id: str) -> dict[str, str]:
    chat_id = await data_of(await client.get(f"/api/application/{app_id}/chat/open"))
    response, frames = await ask(client, chat_id, QUESTION)
    assert response.status_code == 200 and frames, response.text
    return {"chat_id": chat_id, "record_id": str(frames[-1].data["id"])}


async def new_user(operator: httpx.AsyncClient, username: str, role: str, datasets: list[str], apps: list[str]) -> str:
    body = {"username": username, "password": PASSWORD, "role": role, "datasets": datasets, "applications": apps}
    return str((await data_of(await operator.post("/api/user_manage", json=body)))["id"])


async def people(world: World, operator: httpx.AsyncClient, unique: str, b: dict[str, str]) -> None:
    """The four people, signed in, each with a personal token; and one to be deleted."""
    grants = {
        VIEWER: ([world.ids["dataset_id"]], [world.ids["app_id"]]),
        OTHER: ([b["dataset_id"]], [b["app_id"]]),
        EDITOR: ([world.ids["dataset_id"]], [world.ids["app_id"]]),
        ADMIN: ([], []),
    }
    for caller, role in USERS.items():
        username = f"matrix-{role}-{caller.split()[-1]}-{unique}"
        await new_user(operator, username, role, *grants[caller])
        world.usernames[caller] = username
        world.tokens[caller] = token = await sign_in(world.stack, username, PASSWORD)
        async with world.client(caller, token) as person:
            made = await data_of(await person.post("/api/user/token", json={"name": "matrix"}))
        world.own.setdefault(caller, {})["token_id"] = made["id"]
    world.ids["user_id"] = await new_user(operator, f"matrix-gone-{unique}", "viewer", [], [])


async def model_id(operator: httpx.AsyncClient, unique: str) -> str:
    body = {
        "name": f"matrix-{unique}",
        "model_name": "m",
        "credential": {"api_base": "http://127.0.0.1:9/v1", "api_key": "sk-matrix"},
    }
    return str((await data_of(await operator.post("/api/model", json=body)))["id"])


async def build_world(stack: Stack, unique: str) -> World:
    world = World(stack, {ANONYMOUS: None}, {}, {}, {}, "")
    async with world.operator() as operator:
        world.ids.update(await dataset_with_paragraph(operator, f"matrix-A-{unique}"))
        world.ids.update(await fresh_question(world, "operator"))
        made = await application_with_keys(operator, f"matrix-A-{unique}", world.ids["dataset_id"])
        world.tokens[KEY] = made.pop("key")
        link = made.pop("link")
        world.ids.update(made, model=made["app_id"], current_page="1", page_size="10", page="1", size="10")
        b_dataset = (await data_of(await operator.post("/api/dataset", json={"name": f"matrix-B-{unique}"})))["id"]
        b = {"dataset_id": b_dataset, **await application_with_keys(operator, f"matrix-B-{unique}", b_dataset)}
        world.other_dataset = b_dataset
        world.ids.update(await chat_with_record(operator, world.ids["app_id"]))
        world.ids["model_id"] = await model_id(operator, unique)
        await people(world, operator, unique, b)
    async with httpx.AsyncClient(verify=TLS, base_url=stack.url, timeout=120, headers=READS_ENGLISH) as anonymous:
        world.tokens[VISITOR] = await data_of(
            await anonymous.post("/api/application/authentication", json={"access_token": link})
        )
    async with world.client(VISITOR) as visitor:
        world.own.setdefault(VISITOR, {}).update(await chat_with_record(visitor, world.ids["app_id"]))
    world.ids["token_id"] = "0" * 32  # a caller without personal tokens is refused before this is read
    return world


# --- running the matrix ---------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: int
    message: str


async def send(world: World, case: Case, caller: str) -> Outcome:
    ids = {**world.ids, **world.own.get(caller, {})}
    if case.fresh is not None and expected_of(case, caller):
        ids.update(await case.fresh(world, caller))
    method, template = case.key.split(" ", 1)
    async with world.client(caller, ids.pop("token", None)) as client:
        response = await client.request(method, template.format(**ids), params=case.query or None, json=case.body)
    return Outcome(response.status_code, message_of(response))


def message_of(response: httpx.Response) -> str:
    """The sentence of a MaxKB envelope or of an OpenAI error object ("" for anything else)."""
    if not response.headers.get("content-type", "").startswith("application/json"):
        return ""
    body = response.json()
    if not isinstance(body, dict):
        return ""
    error = body.get("error")
    return str(body.get("message") or (error.get("message") if isinstance(error, dict) else "") or "")


@pytest.fixture(scope="module")
async def world(stack: Stack) -> World:
    return await build_world(stack, uuid.uuid4().hex[:8])


@pytest.fixture(scope="module")
async def outcomes(world: World) -> dict[tuple[str, str], Outcome]:
    found: dict[tuple[str, str], Outcome] = {}
    for case in CASES:
        for caller in CALLERS:
            found[case.key, caller] = await send(world, case, caller)
    return found


async def served_routes(stack: Stack) -> set[str]:
    async with httpx.AsyncClient(verify=TLS, base_url=stack.url, timeout=120, headers=READS_ENGLISH) as anonymous:
        spec = (await anonymous.get("/openapi.json")).json()
    routes = {f"{method.upper()} {path}" for path, operations in spec["paths"].items() for method in operations}
    return routes | ({"GET /metrics"} if stack.settings.metrics else set())


async def test_the_cases_are_every_route_the_gateway_serves(stack: Stack) -> None:
    keys = [case.key for case in CASES]
    assert len(keys) == len(set(keys)), "a route is listed twice"
    assert set(keys) == await served_routes(stack)
    assert set(EXPECT) == set(Need), "every need has a hand-written row"


async def test_every_caller_gets_what_the_hand_written_table_expects_on_every_route(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    wrong = []
    for case in CASES:
        for caller in CALLERS:
            outcome, through = outcomes[case.key, caller], expected_of(case, caller)
            if through and (outcome.status in REFUSED or outcome.status >= 500):
                wrong.append(f"{case.key} as {caller}: expected through, got {outcome.status} {outcome.message}")
            elif not through and outcome.status not in REFUSED:
                wrong.append(f"{case.key} as {caller}: expected refused, got {outcome.status} {outcome.message}")
            elif not through and not outcome.message:
                wrong.append(f"{case.key} as {caller}: refused without a sentence")
    assert not wrong, f"{len(wrong)} of {len(outcomes)}:\n" + "\n".join(wrong)


async def test_an_administrator_reaches_every_route_but_a_visitors_own_chat_list(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    reached = [case.key for case in CASES if outcomes[case.key, ADMIN].status not in REFUSED]
    assert reached == [case.key for case in CASES if not case.visitors_only]
    for case in CASES:
        if case.visitors_only:
            assert "share-link visitor" in outcomes[case.key, ADMIN].message


async def test_a_viewer_reads_the_log_and_every_write_route_refuses_them(
    outcomes: dict[tuple[str, str], Outcome],
) -> None:
    assert outcomes[f"GET {APP}/chat/{{current_page}}/{{page_size}}", VIEWER].status == 200
    assert outcomes[f"GET {APP}/chat/export", VIEWER].status == 200
    writes = {Need.CHAT_ASK, Need.APPLICATION_WRITE, Need.APPLICATION_CREATE, Need.DATASET_WRITE, Need.DATASET_CREATE}
    write_routes = [case.key for case in CASES if any(r.need in writes for r in ROUTES[case.key])]
    assert len(write_routes) > 25
    through = [key for key in write_routes if outcomes[key, VIEWER].status not in REFUSED]
    assert not through, f"a viewer changed something through {through}"
    refusal = outcomes[f"PUT {DS}", VIEWER]
    assert refusal.status == 403 and "may not change this dataset" in refusal.message


async def test_an_editor_of_one_dataset_may_not_read_change_or_search_another(world: World) -> None:
    other = world.other_dataset
    async with world.client(EDITOR) as editor:
        assert (await editor.get(f"/api/dataset/{other}/document")).status_code == 403
        changed = await editor.put(f"/api/dataset/{other}", json={"name": "taken over"})
        assert changed.status_code == 403 and "ask an administrator" in changed.json()["message"]
        searched = await editor.get(f"/api/dataset/{other}/hit_test", params=Q)
        assert searched.status_code == 403
        listed = {d["id"] for d in await data_of(await editor.get("/api/dataset"))}
    assert world.ids["dataset_id"] in listed and other not in listed, "the list shows only what is granted"
