"""The gateway behind a real reverse proxy (Debian's nginx, configured as docs/operations.md says):
no route opens to an anonymous caller or a visitor because the proxy's connections come from
loopback; the client address the gateway counts is the one nginx forwards when, and only when,
``KB_TRUSTED_PROXIES`` names nginx; and an answer streams through it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi.routing import APIRoute, iter_route_contexts

from gateway.app import create_app
from kbcore.permissions.roles import Kind, Need, Principal, allows
from kbcore.permissions.table import ROUTES
from kbcore.rpc.caller_token import bearer, operator_token
from kbcore.settings import Settings
from tests.eventually import eventually
from tests.fakes.openai_server import ChatReply, FakeOpenAI, plausible_route
from tests.harness import Stack, another_gateway
from tests.nginx_proxy import nginx_in_front_of
from tests.sse_client import answer_text, parse_frames
from tools.seed_demo import DEMO_APPLICATION_ID

# Path values besides ids; every id is a fresh UUID no object has, so a route that wrongly let a
# caller through acts on nothing.
PLAUSIBLE = {"current_page": "1", "page_size": "20", "page": "1", "size": "20", "model": "fake-chat"}
SIGNINS_PER_IP = 2
QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"


def requests_for(routes: list[str]) -> list[tuple[str, str, str]]:
    """(route, method, path) for each ``"METHOD /template"``, with a plausible value for each
    path parameter: page numbers, a model name, a fresh UUID for every id."""
    made = []
    for route in routes:
        method, template = route.split(" ", 1)
        path = re.sub(r"\{(\w+)\}", lambda m: PLAUSIBLE.get(m.group(1)) or str(uuid.uuid4()), template)
        made.append((route, method, path))
    return made


def served(settings: Settings) -> set[str]:
    """The routes the gateway serves, as ``"METHOD /template"``. A route the permission table
    listed ahead of its handler would answer 404 to everyone: nothing to refuse there, so only
    served routes are tested below."""
    return {
        f"{method} {context.path_format}"
        for context in iter_route_contexts(create_app(settings).routes)
        if isinstance(context.original_route, APIRoute)
        for method in context.original_route.methods or ()
    }


def not_public(settings: Settings) -> list[str]:
    serving = served(settings)
    return [
        route for route, needs in ROUTES.items() if route in serving and any(r.need is not Need.PUBLIC for r in needs)
    ]


def never_for_visitors(settings: Settings) -> list[str]:
    """Routes whose needs no visitor meets on any object: datasets, applications, logs, models,
    accounts, metrics (a visitor only chats, on its own application)."""
    visitor = Principal(Kind.VISITOR, application_id=DEMO_APPLICATION_ID)
    serving = served(settings)
    return [
        route for route, needs in ROUTES.items() if route in serving and any(not allows(visitor, r.need) for r in needs)
    ]


async def statuses(client: httpx.AsyncClient, routes: list[str]) -> dict[str, int]:
    """Each route's status for a request with no body (nothing for a route to parse before it
    decides who may call)."""
    return {route: (await client.request(method, path)).status_code for route, method, path in requests_for(routes)}


def operator(stack: Stack) -> httpx.AsyncClient:
    """Straight to the gateway, presenting the operator's token (whatever loopback callers are)."""
    return stack.http(headers=dict(bearer(operator_token(stack.settings))))


async def demo_share_link(stack: Stack) -> str:
    """The demo application's share link, created if it has none yet."""
    async with operator(stack) as client:
        found = await client.get(f"/api/application/{DEMO_APPLICATION_ID}/access_token")
        if found.status_code == 404:
            found = await client.post(f"/api/application/{DEMO_APPLICATION_ID}/access_token")
    assert found.status_code == 200, found.text
    return str(found.json()["data"]["access_token"])


async def new_share_link(stack: Stack, name: str) -> str:
    """A new application's share link (sign-ins to it are counted for this test alone)."""
    async with operator(stack) as client:
        app_id = (await client.post("/api/application", json={"name": name})).json()["data"]["id"]
        made = await client.post(f"/api/application/{app_id}/access_token")
    assert made.status_code == 200, made.text
    return str(made.json()["data"]["access_token"])


async def sign_in(client: httpx.AsyncClient, access_token: str, **headers: str) -> httpx.Response:
    return await client.post("/api/application/authentication", json={"access_token": access_token}, headers=headers)


@contextlib.asynccontextmanager
async def client_at(url: str, source: str = "127.0.0.1", **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose connections come from ``source`` (any of 127/8 is this machine)."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, base_url=url, timeout=120, headers=headers) as client:
        yield client


async def test_an_anonymous_caller_through_nginx_is_refused_on_every_route_that_is_not_public(stack: Stack) -> None:
    """nginx connects from loopback: that must not make its anonymous clients anybody."""
    routes = not_public(stack.settings)
    assert "GET /api/dataset" in routes and "POST /api/application/authentication" not in routes
    async with nginx_in_front_of(stack.url) as nginx, client_at(nginx.url) as anonymous:
        seen = await statuses(anonymous, routes)
    wrong = {route: status for route, status in seen.items() if status != 401}
    assert not wrong, f"not 401 for an anonymous caller through nginx: {wrong}"


async def test_a_visitor_through_nginx_never_reaches_a_route_for_the_people_who_run_things(stack: Stack) -> None:
    routes = never_for_visitors(stack.settings)
    assert {"DELETE /api/dataset/{dataset_id}", "GET /api/user_manage", "GET /metrics"} <= set(routes)
    assert "POST /api/application/chat_message/{chat_id}" not in routes
    access_token = await demo_share_link(stack)
    async with nginx_in_front_of(stack.url) as nginx, client_at(nginx.url) as anonymous:
        signed_in = await sign_in(anonymous, access_token)
        assert signed_in.status_code == 200, signed_in.text
        async with client_at(nginx.url, authorization=f"Bearer {signed_in.json()['data']}") as visitor:
            assert (await visitor.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).status_code == 200
            seen = await statuses(visitor, routes)
    wrong = {route: status for route, status in seen.items() if status not in (401, 403)}
    assert not wrong, f"a visitor's token through nginx was not refused: {wrong}"


async def test_with_nginx_trusted_the_gateway_counts_the_address_nginx_forwards(stack: Stack, unique: str) -> None:
    """Sign-ins per client address (KB_SIGNINS_PER_IP) are counted against the address nginx
    appends to X-Forwarded-For: the client's own connection, not what the client wrote there."""
    access_token = await new_share_link(stack, f"behind-nginx-{unique}")
    settings = dataclasses.replace(stack.settings, trusted_proxies="127.0.0.1", signins_per_ip=SIGNINS_PER_IP)
    async with another_gateway(settings) as gateway, nginx_in_front_of(gateway) as nginx:
        async with client_at(nginx.url, "127.0.0.2") as first:
            from_first = [(await sign_in(first, access_token)).status_code for _ in range(SIGNINS_PER_IP + 1)]
        async with client_at(nginx.url, "127.0.0.3") as second:
            from_second = (await sign_in(second, access_token)).status_code
        async with client_at(nginx.url, "127.0.0.4") as liar:  # claims to be the first client
            claimed = (await sign_in(liar, access_token, **{"x-forwarded-for": "127.0.0.2"})).status_code
    assert from_first == [200] * SIGNINS_PER_IP + [429], "one client, counted as one address"
    assert from_second == 200, "another client is counted on its own, although nginx's connections all look alike"
    assert claimed == 200, "an address a client writes into X-Forwarded-For itself is not believed"


async def test_with_no_trusted_proxies_a_forged_header_is_ignored_whatever_the_environment_says(
    stack: Stack, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without KB_TRUSTED_PROXIES every request counts against its TCP peer: a direct caller's
    X-Forwarded-For changes nothing (not even with uvicorn's FORWARDED_ALLOW_IPS set), and all
    of nginx's clients are one address, nginx's."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    access_token = await new_share_link(stack, f"untrusted-nginx-{unique}")
    settings = dataclasses.replace(stack.settings, trusted_proxies="", signins_per_ip=SIGNINS_PER_IP)
    async with another_gateway(settings) as gateway, nginx_in_front_of(gateway) as nginx:
        async with client_at(gateway) as direct:
            forged = [
                (await sign_in(direct, access_token, **{"x-forwarded-for": f"198.51.100.{n}"})).status_code
                for n in range(1, SIGNINS_PER_IP + 2)
            ]
        async with client_at(nginx.url, "127.0.0.2") as through_nginx:
            proxied = (await sign_in(through_nginx, access_token)).status_code
    assert forged == [200] * SIGNINS_PER_IP + [429], "each forged address was counted under the real peer"
    assert proxied == 429, "nginx's client counts as nginx's address, 127.0.0.1, already at its limit"


async def test_an_answer_streams_through_nginx_to_a_share_link_visitor(
    remote_stack: Stack, fake_model: FakeOpenAI
) -> None:
    """The model sends the first words and then holds the rest until the answer is stopped, so
    the words reach the visitor only if nginx passes the stream on as it comes (a proxy that
    holds it back, nginx with ``gzip_types text/event-stream`` for one, fails this)."""
    fake_model.default = plausible_route(lambda: ChatReply.hang(["已经生成的", "部分回答"]))
    access_token = await demo_share_link(remote_stack)
    received = bytearray()
    async with nginx_in_front_of(remote_stack.url) as nginx, client_at(nginx.url) as anonymous:
        token = (await sign_in(anonymous, access_token)).json()["data"]
        async with client_at(nginx.url, authorization=f"Bearer {token}") as visitor:
            chat_id = (await visitor.get(f"/api/application/{DEMO_APPLICATION_ID}/chat/open")).json()["data"]
            url = f"/api/application/chat_message/{chat_id}"

            async def read_answer() -> int:
                async with visitor.stream("POST", url, json={"message": QUESTION, "progress": "named"}) as response:
                    async for piece in response.aiter_raw():
                        received.extend(piece)
                    return response.status_code

            asking = asyncio.create_task(read_answer())
            await eventually(lambda: "部分回答".encode() in received or asking.done(), timeout=60, what="first words")
            assert not asking.done(), f"the stream ended while the model still held the answer: {bytes(received)!r}"
            stopped = await visitor.post(f"{url}/stop")
            assert stopped.json()["data"] == {"stopped": True}, stopped.text
            assert await asking == 200
    frames = parse_frames(bytes(received))
    assert [f.kind for f in frames].count("progress") >= 1, "progress events came through as named events"
    assert answer_text(frames) == "已经生成的部分回答"
    assert frames[-1].data["is_end"] is True, "the stopped answer ends its stream properly through nginx"
