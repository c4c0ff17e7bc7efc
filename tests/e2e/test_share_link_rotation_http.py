"""Rotating a share link over HTTP (MaxKB v1's ``PUT /api/application/{id}/access_token``)
works whatever else the request carries: a client that always sends ``is_active`` (MaxKB's
own pages do) rotates a leaked link in one request, and every combination of MaxKB's fields does
all it asks in one transaction, or, refused, nothing of it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import httpx
import pytest

from kbcore.rpc.caller_token import bearer
from tests.harness import Stack


def rfc3339(delta: dt.timedelta) -> str:
    return (dt.datetime.now(dt.UTC) + delta).isoformat().replace("+00:00", "Z")


async def new_link(stack: Stack, name: str) -> tuple[str, dict[str, Any]]:
    """A fresh application and its share link (active, 5 questions a visitor, 50 a day)."""
    async with stack.http() as operator:
        made = await operator.post("/api/application", json={"name": name})
        assert made.status_code == 200, made.text
        app_id = str(made.json()["data"]["id"])
        link = await operator.post(f"/api/application/{app_id}/access_token", json={"access_num": 5, "daily_cap": 50})
        assert link.status_code == 200, link.text
    return app_id, dict(link.json()["data"])


async def sign_in(stack: Stack, access_token: str) -> httpx.Response:
    async with stack.http() as anonymous:
        return await anonymous.post("/api/application/authentication", json={"access_token": access_token})


async def open_chat_as(stack: Stack, token: str, app_id: str) -> httpx.Response:
    async with stack.http(headers=bearer(token)) as caller:
        return await caller.get(f"/api/application/{app_id}/chat/open")


async def put_link(stack: Stack, app_id: str, body: dict[str, Any]) -> httpx.Response:
    async with stack.http() as operator:
        return await operator.put(f"/api/application/{app_id}/access_token", json=body)


async def shown_link(stack: Stack, app_id: str) -> dict[str, Any]:
    async with stack.http() as operator:
        shown = await operator.get(f"/api/application/{app_id}/access_token")
    assert shown.status_code == 200, shown.text
    return dict(shown.json()["data"])


async def test_a_leaked_link_is_rotated_by_a_client_that_always_sends_is_active(stack: Stack, unique: str) -> None:
    app_id, link = await new_link(stack, f"rotate-active-{unique}")
    old = link["access_token"]
    visitor = (await sign_in(stack, old)).json()["data"]
    assert (await open_chat_as(stack, visitor, app_id)).status_code == 200

    rotated = await put_link(stack, app_id, {"is_active": True, "access_token_reset": True})

    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["data"]
    assert new["access_token"] != old and new["is_active"] is True
    assert (new["access_num"], new["daily_cap"]) == (5, 50), "a rotation keeps the link's limits"
    assert (await shown_link(stack, app_id))["access_token"] == new["access_token"]
    refused = await sign_in(stack, old)
    assert refused.status_code == 404, "the leaked link no longer signs anyone in"
    gone = await open_chat_as(stack, visitor, app_id)
    assert gone.status_code == 401 and "open the share link again" in gone.json()["message"]
    fresh = await sign_in(stack, new["access_token"])
    assert fresh.status_code == 200, fresh.text
    assert (await open_chat_as(stack, fresh.json()["data"], app_id)).status_code == 200


async def test_rotating_and_switching_off_in_one_request_does_both(stack: Stack, unique: str) -> None:
    app_id, link = await new_link(stack, f"rotate-off-{unique}")

    rotated = await put_link(stack, app_id, {"access_token_reset": True, "is_active": False})

    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["data"]
    assert new["access_token"] != link["access_token"] and new["is_active"] is False
    assert (await sign_in(stack, link["access_token"])).status_code == 404
    off = await sign_in(stack, new["access_token"])
    assert off.status_code == 401 and "switched off" in off.json()["message"], off.text


async def test_every_field_of_one_request_is_applied_together_with_the_rotation(stack: Stack, unique: str) -> None:
    app_id, link = await new_link(stack, f"rotate-all-{unique}")
    soon = rfc3339(dt.timedelta(days=3))
    body = {
        "access_token_reset": True,
        "is_active": True,
        "access_num": 7,
        "daily_cap": 70,
        "expires_at": soon,
        "white_active": False,
        "white_list": [],
        "show_source": True,
    }

    rotated = await put_link(stack, app_id, body)

    assert rotated.status_code == 200, rotated.text
    shown = await shown_link(stack, app_id)
    assert shown["access_token"] == rotated.json()["data"]["access_token"] != link["access_token"]
    assert (shown["is_active"], shown["access_num"], shown["daily_cap"]) == (True, 7, 70)
    assert shown["expires_at"].startswith(soon[:16])
    assert (await sign_in(stack, shown["access_token"])).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        # MaxKB's own settings dialog: always all of these, is_active not among them
        {"show_source": True, "white_list": [], "white_active": False, "access_num": 9},
        # a client that sends the link's state with every edit
        {"is_active": True, "access_num": 9},
    ],
)
async def test_an_edit_that_restates_the_links_state_is_applied_and_rotates_nothing(
    stack: Stack, unique: str, body: dict[str, Any]
) -> None:
    app_id, link = await new_link(stack, f"restate-{unique}")

    edited = await put_link(stack, app_id, body)

    assert edited.status_code == 200, edited.text
    shown = await shown_link(stack, app_id)
    assert (shown["access_token"], shown["is_active"], shown["access_num"]) == (link["access_token"], True, 9)


async def test_switching_on_a_link_that_is_on_is_still_409_and_changes_nothing(stack: Stack, unique: str) -> None:
    app_id, link = await new_link(stack, f"on-twice-{unique}")

    twice = await put_link(stack, app_id, {"is_active": True})

    assert twice.status_code == 409 and "already active" in twice.json()["message"], twice.text
    assert (await shown_link(stack, app_id))["access_token"] == link["access_token"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"access_token_reset": True, "white_active": True, "white_list": ["https://a.example/x"]}, "is not a site"),
        ({"access_token_reset": True, "white_list": ["a.example; script-src *"]}, "is not a site"),
        ({"access_token_reset": True, "is_active": True, "show_source": False}, "PUT /api/application/"),
        ({"access_token_reset": True, "is_active": False, "access_num": 0}, "access_num"),
        ({"access_token_reset": True, "is_active": False, "expires_at": "2001-01-01T00:00:00Z"}, "in the future"),
    ],
)
async def test_a_rotation_asked_with_something_refused_changes_nothing(
    stack: Stack, unique: str, body: dict[str, Any], words: str
) -> None:
    app_id, link = await new_link(stack, f"refused-{unique}")

    refused = await put_link(stack, app_id, body)

    assert refused.status_code == 400 and words in refused.json()["message"], refused.text
    shown = await shown_link(stack, app_id)
    assert (shown["access_token"], shown["is_active"], shown["access_num"], shown["expires_at"]) == (
        link["access_token"],
        True,
        5,
        "",
    )
    assert (await sign_in(stack, link["access_token"])).status_code == 200, "the link still works"
