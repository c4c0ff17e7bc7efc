"""The gateway and the one permission table agree: every route it serves is in
``kbcore.permissions.table.ROUTES`` and every entry there is a route it serves, each entry's object
is a path parameter of its route, and the check is wired to every route (one missing from the
table is refused, even to the operator). docs/access.md, People and roles."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.requests import Request

from gateway.app import create_app
from gateway.backends import Backend, Backends
from gateway.errors import ApiError
from gateway.permission_check.route_check import objects_of
from gateway.permission_check.route_keys import UNCHECKED_MODULES
from kbcore.permissions.roles import OPERATOR, Kind, Need, Principal, Role
from kbcore.permissions.table import ROUTES, Requirement
from kbcore.permissions.wire import METADATA_KEY, principal_in
from kbcore.rpc.caller_token import operator_token
from kbcore.settings import Settings

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}
# In the table, not served yet (none now). A route listed here that is served fails the test
# below, which says to take it out.
NOT_YET_SERVED: frozenset[str] = frozenset()


def settings_in(folder: Path, **changes: object) -> Settings:
    return Settings(data_dir=folder, metrics=True, **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
async def app(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FastAPI]:
    settings = settings_in(tmp_path_factory.mktemp("route-table"))
    backends = Backends.connect(settings)
    yield create_app(settings, backends)
    await backends.close()


def served(app: FastAPI) -> dict[str, str]:
    """``"METHOD /template"`` → template, for every operation in the schema, and /metrics."""
    routes = {
        f"{method.upper()} {path}": path
        for path, operations in app.openapi()["paths"].items()
        for method in operations
        if method in HTTP_METHODS
    }
    if app.state.settings.metrics:
        routes["GET /metrics"] = "/metrics"
    return routes


def path_parameters(template: str) -> set[str]:
    return set(re.findall(r"{(\w+)}", template))


def test_every_route_the_gateway_serves_is_in_the_table(app: FastAPI) -> None:
    routes = served(app)
    assert len(routes) > 60 and "GET /metrics" in routes and "POST /api/user/login" in routes
    missing = sorted(set(routes) - ROUTES.keys())
    assert not missing, (
        f"routes the permission table does not list (add them to kbcore/permissions/table.py): {missing}"
    )


def test_every_table_entry_is_a_route_the_gateway_serves(app: FastAPI) -> None:
    routes = served(app)
    assert ROUTES.keys() >= NOT_YET_SERVED
    now_served = sorted(NOT_YET_SERVED & routes.keys())
    assert not now_served, f"served now: take them out of NOT_YET_SERVED: {now_served}"
    stale = sorted(ROUTES.keys() - routes.keys() - NOT_YET_SERVED)
    assert not stale, f"table entries no route serves (a typo, or a route gone): {stale}"


def test_every_object_a_requirement_names_is_a_path_parameter_of_its_route(app: FastAPI) -> None:
    routes = served(app)
    for key, requirements in ROUTES.items():
        if key in NOT_YET_SERVED:
            continue
        parameters = path_parameters(routes[key])
        for requirement in requirements:
            if requirement.object_from:
                assert requirement.object_from in parameters, f"{key}: no path parameter {requirement.object_from}"


def test_the_routes_outside_the_schema_are_metrics_pages_and_unserved_answers_only(app: FastAPI) -> None:
    hidden = []
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if not isinstance(route, APIRoute) or route.endpoint.__module__ in UNCHECKED_MODULES:
            continue
        if not route.include_in_schema:
            hidden.append(f"{sorted(context.methods or ())} {context.path_format}")
    assert hidden == ["['GET'] /metrics"], "a route outside the schema would escape the table test above"


async def client_of(app: FastAPI, host: str = "203.0.113.9", token: str = "") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(host, 40000))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers["Accept-Language"] = "en"  # the refusals' English, which the assertions read
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", headers=headers)


async def test_a_route_missing_from_the_table_is_refused_even_to_the_operator(tmp_path: Path) -> None:
    settings = settings_in(tmp_path)
    app = create_app(settings, Backends.connect(settings))

    @app.get("/api/not-in-the-table")
    async def unlisted() -> dict[str, bool]:
        return {"reached": True}

    async with await client_of(app, token=operator_token(settings)) as operator:
        refused = await operator.get("/api/not-in-the-table")
        assert refused.status_code == 403
        assert "GET /api/not-in-the-table is not in the permission table" in refused.json()["message"]
        listed = await operator.get("/api/dataset/document/upload_rules")
        assert listed.status_code == 200, "the operator token passes without asking the chat service"
    await app.state.backends.close()


async def test_credentials_are_asked_for_before_the_route_runs(app: FastAPI) -> None:
    async with await client_of(app) as anonymous:
        assert (await anonymous.get("/api/profile")).status_code == 200, "a public route needs nothing"
        refused = await anonymous.post("/api/dataset", json={"name": 42})
        assert refused.status_code == 401, "no credentials: 401 before the body is judged"
        openai = await anonymous.post("/v1/chat/completions", json={})
        assert openai.status_code == 401 and "error" in openai.json(), "OpenAI's paths refuse in OpenAI's shape"
    async with await client_of(app, token="made-up-token") as stranger:
        refused = await stranger.get("/api/dataset")
        assert refused.status_code == 401 and "not one this deployment issues" in refused.json()["message"]


async def test_only_the_development_switch_makes_a_bare_loopback_caller_the_operator(tmp_path: Path) -> None:
    for dev, host, status in ((False, "127.0.0.1", 401), (True, "127.0.0.1", 200), (True, "203.0.113.9", 401)):
        settings = settings_in(tmp_path, dev_loopback_operator=dev)
        app = create_app(settings, Backends.connect(settings))
        async with await client_of(app, host=host) as client:
            response = await client.get("/api/dataset/document/upload_rules")
            assert response.status_code == status, (dev, host)
        await app.state.backends.close()


def request_to(app: FastAPI, token: str, path_params: dict[str, str] | None = None) -> Request:
    headers = [(b"authorization", f"Bearer {token}".encode())]
    return Request({"type": "http", "headers": headers, "app": app, "path_params": path_params or {}})


async def test_retrieval_calls_carry_the_principal_and_chat_calls_the_token(app: FastAPI) -> None:
    request = request_to(app, "kbs_" + "a" * 48)
    backend = Backend(app.state.backends, request)
    with pytest.raises(ApiError) as unresolved:
        backend.metadata_for(backend.retrieval.datasets.ListDatasets)
    assert unresolved.value.status == 500, "no retrieval call goes out without a resolved principal"
    viewer = Principal(Kind.USER, role=Role.VIEWER, user_id="u1", datasets=frozenset({"d1"}))
    request.state.principal = viewer
    to_retrieval = backend.metadata_for(backend.retrieval.search.Search)
    assert to_retrieval is not None and principal_in(to_retrieval) == viewer
    assert not any(key == "authorization" for key, _ in to_retrieval), "the token stays with the chat service"
    to_chat = backend.metadata_for(backend.chat.access.WhoAmI)
    assert to_chat == (("authorization", "Bearer kbs_" + "a" * 48),)
    assert not any(key == METADATA_KEY for key, _ in to_chat)
    request.state.principal = OPERATOR
    assert principal_in(backend.metadata_for(backend.retrieval.documents.GetDocument)) == OPERATOR


def test_an_object_the_route_does_not_carry_is_refused_not_read_as_none(app: FastAPI) -> None:
    requirement = (Requirement(Need.DATASET_READ, "dataset_id"),)
    assert objects_of(request_to(app, "x", {"dataset_id": "d1"}), requirement) == {"dataset_id": ["d1"]}
    with pytest.raises(ApiError) as refused:
        objects_of(request_to(app, "x", {}), requirement)
    assert refused.value.status == 403
