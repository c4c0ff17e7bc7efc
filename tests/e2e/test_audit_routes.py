"""The audit trail over real HTTP (docs/access.md, "The audit trail"): an application and a user
made through the gateway show up in ``GET /api/audit`` with who made them, each filter narrows
the page, the CSV export neutralises names a spreadsheet would run as formulas, only
administrators read it, and a filter that is not a time is refused with a sentence."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from gateway.presenter import AUDIT_EXPORT_COLUMNS, FORMULA_PREFIXES
from kbcore.rpc.caller_token import operator_token
from tests.harness import READS_ENGLISH, Stack
from tests.shared_tls import TLS
from tools.seed_demo import DEMO_DATASET_ID

PASSWORD = "audit-Password-7"
FORMULA_APP = "=cmd|' /C calc'!A0"
FORMULA_USER = "+danger"


def client(stack: Stack, token: str | None) -> httpx.AsyncClient:
    """Credentials passed explicitly, whatever ``stack.http()`` sends by default."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(verify=TLS, base_url=stack.url, timeout=120, headers={**headers, **READS_ENGLISH})


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json()["data"]


async def sign_in(stack: Stack, username: str) -> str:
    async with client(stack, None) as anonymous:
        token = data(await anonymous.post("/api/user/login", json={"username": username, "password": PASSWORD}))
    assert isinstance(token, str)
    return token


async def new_user(admin: httpx.AsyncClient, username: str, role: str) -> dict[str, Any]:
    made: dict[str, Any] = data(
        await admin.post("/api/user_manage", json={"username": username, "password": PASSWORD, "role": role})
    )
    return made


@pytest.fixture
async def operator(stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with client(stack, operator_token(stack.settings)) as made:
        yield made


@pytest.fixture
async def made(operator: httpx.AsyncClient, unique: str) -> dict[str, str]:
    """An application and a user whose names a spreadsheet would read as formulas, made by the
    operator token just now (``before``: a moment earlier, for the time filters)."""
    before = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    app_name = f"{FORMULA_APP} {unique}"
    body = {"name": app_name, "dataset_id_list": [DEMO_DATASET_ID]}
    app = data(await operator.post("/api/application", json=body))["id"]
    user = await new_user(operator, f"{FORMULA_USER}-{unique}", "viewer")
    return {"before": before, "app": app, "app_name": app_name, "user": user["id"], "username": user["username"]}


async def page_of(caller: httpx.AsyncClient, **query: str | int) -> dict[str, Any]:
    found: dict[str, Any] = data(await caller.get("/api/audit", params=query))
    return found


async def test_made_things_are_in_the_trail_with_who_made_them(
    operator: httpx.AsyncClient, made: dict[str, str]
) -> None:
    page = await page_of(operator, object_id=made["app"])
    assert (page["total"], page["current"], page["size"]) == (1, 1, 50)
    event = page["records"][0]
    assert set(event) == {*AUDIT_EXPORT_COLUMNS}
    assert (event["action"], event["object_kind"], event["object_name"]) == (
        "application.create",
        "application",
        made["app_name"],
    )
    assert (event["actor_kind"], event["actor"]) == ("operator", "operator")
    assert event["client_address"] == "127.0.0.1"
    assert datetime.fromisoformat(event["time"]) >= datetime.fromisoformat(made["before"])

    users = (await page_of(operator, object_id=made["user"], action="user."))["records"]
    assert [(e["action"], e["object_name"]) for e in users] == [("user.create", made["username"])]
    assert PASSWORD not in str(users), "never a secret in the trail"


async def test_each_filter_narrows_the_trail(operator: httpx.AsyncClient, made: dict[str, str]) -> None:
    recent = await page_of(operator, since=made["before"], page_size=500)
    ids = {e["object_id"] for e in recent["records"]}
    assert {made["app"], made["user"]} <= ids
    times = [datetime.fromisoformat(e["time"]) for e in recent["records"]]
    assert times == sorted(times, reverse=True), "newest first"

    apps = (await page_of(operator, action="application.", since=made["before"], page_size=500))["records"]
    assert made["app"] in {e["object_id"] for e in apps}
    assert all(e["action"].startswith("application.") for e in apps), "the action is a prefix"
    assert made["user"] not in {e["object_id"] for e in apps}

    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert (await page_of(operator, object_id=made["app"], since=later))["total"] == 0
    assert (await page_of(operator, object_id=made["app"], until="2000-01-01T00:00:00Z"))["total"] == 0
    assert (await page_of(operator, object_id=made["app"], until=later))["total"] == 1
    assert (await page_of(operator, object_id=made["app"], actor="someone-else"))["total"] == 0
    assert (await page_of(operator, object_id=made["app"], actor="operator"))["total"] == 1

    first = await page_of(operator, since=made["before"], current_page=1, page_size=1)
    second = await page_of(operator, since=made["before"], current_page=2, page_size=1)
    assert (first["size"], second["current"], len(first["records"]), len(second["records"])) == (1, 2, 1, 1)
    assert first["total"] >= 2 and first["records"][0]["id"] != second["records"][0]["id"]


async def test_an_administrators_own_actions_carry_their_name(
    stack: Stack, operator: httpx.AsyncClient, unique: str
) -> None:
    admin_name = f"audit-admin-{unique}"
    await new_user(operator, admin_name, "admin")
    async with client(stack, await sign_in(stack, admin_name)) as admin:
        body = {"name": f"管理员的应用-{unique}", "dataset_id_list": [DEMO_DATASET_ID]}
        app = data(await admin.post("/api/application", json=body))["id"]
        mine = (await page_of(admin, actor=admin_name, action="application."))["records"]
    assert [(e["action"], e["object_id"], e["actor_kind"]) for e in mine] == [("application.create", app, "user")]


def export_rows(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    reader = csv.DictReader(io.StringIO(response.content.decode("utf-8-sig")))
    assert reader.fieldnames == AUDIT_EXPORT_COLUMNS
    return list(reader)


async def test_the_export_is_the_filtered_trail_with_formulas_neutralised(
    operator: httpx.AsyncClient, made: dict[str, str]
) -> None:
    response = await operator.get("/api/audit/export", params={"since": made["before"]})
    today = datetime.now(UTC).date().isoformat()
    assert f'filename="audit-{today}.csv"' in response.headers["content-disposition"]
    rows = export_rows(response)
    assert int(response.headers["x-audit-exported"]) == len(rows) == int(response.headers["x-audit-total"])
    by_object = {row["object_id"]: row for row in rows}
    assert by_object[made["app"]]["object_name"] == "'" + made["app_name"]
    assert by_object[made["user"]]["object_name"] == "'" + made["username"]
    for row in rows:
        for column, cell in row.items():
            assert not cell.startswith(FORMULA_PREFIXES), f"{column} would run as a formula: {cell!r}"

    only_users = export_rows(
        await operator.get("/api/audit/export", params={"action": "user.", "object_id": made["user"]})
    )
    assert [(r["action"], r["object_name"], r["actor"]) for r in only_users] == [
        ("user.create", "'" + made["username"], "operator")
    ]


async def test_only_administrators_read_the_trail(stack: Stack, operator: httpx.AsyncClient, unique: str) -> None:
    for role in ("viewer", "editor"):
        await new_user(operator, f"audit-{role}-{unique}", role)
        async with client(stack, await sign_in(stack, f"audit-{role}-{unique}")) as person:
            for path in ("/api/audit", "/api/audit/export"):
                refused = await person.get(path)
                assert refused.status_code == 403, (role, path, refused.text)
                assert refused.json()["message"], "a sentence says why"
    async with client(stack, None) as anonymous:
        for path in ("/api/audit", "/api/audit/export?since=not-a-time"):
            assert (await anonymous.get(path)).status_code == 401, "credentials are asked for before the filters"


FILTER_REFUSALS = [
    ({"since": "yesterday"}, "since must be an RFC 3339 time"),
    ({"since": "2025-01-31"}, "since must be an RFC 3339 time"),
    ({"until": "2025-01-31T08:00:00"}, "until must be an RFC 3339 time"),
    ({"since": "2025-02-01T00:00:00Z", "until": "2025-01-01T00:00:00Z"}, "since must be earlier than until"),
    ({"since": "2025-01-01T08:00:00+08:00", "until": "2025-01-01T00:00:00Z"}, "since must be earlier than until"),
    ({"actor": "x" * 201}, "actor"),
]
PAGE_REFUSALS = [
    ({"current_page": 0}, "current_page"),
    ({"page_size": 501}, "page_size"),
    ({"page_size": 0}, "page_size"),
]


@pytest.mark.parametrize(
    ("paths", "query", "words"),
    [(("/api/audit", "/api/audit/export"), q, w) for q, w in FILTER_REFUSALS]
    + [(("/api/audit",), q, w) for q, w in PAGE_REFUSALS],
)
async def test_bad_filters_are_refused_with_a_sentence(
    operator: httpx.AsyncClient, paths: tuple[str, ...], query: dict[str, Any], words: str
) -> None:
    for path in paths:
        refused = await operator.get(path, params=query)
        assert refused.status_code == 400, (path, query, refused.text)
        assert words in refused.json()["message"], refused.json()["message"]
