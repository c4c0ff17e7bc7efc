"""A registered model's stored API key is only ever sent to the address it was entered for: a
``PUT /api/model/{id}`` that moves ``api_base`` elsewhere without the key is refused (400, in
words) and changes nothing, so the ``check`` after it still calls the old address and the new one
never sees the key; a cosmetic change of the address (case, a default port, a trailing slash) is
not a move; moving with the key entered again, or with an empty key, is taken."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from services.chat.admin.model_admin import KEY_FOR_NEW_ADDRESS, address
from tests.e2e.test_models_http import model_body, register
from tests.fakes.openai_server import FakeOpenAI
from tests.harness import Stack

OLD_KEY = "sk-entered-for-the-old-address-1234"
NEW_KEY = "sk-entered-for-the-new-address-5678"


@pytest.fixture(scope="module")
def old_host() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def new_host() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def authorizations(fake: FakeOpenAI) -> list[str]:
    return [r.headers.get("authorization", "") for r in fake.requests]


async def edit_and_check(stack: Stack, model_id: str, change: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """The PUT's reply, the check's reply and the model as listed afterwards."""
    async with stack.http() as operator:
        edited = await operator.put(f"/api/model/{model_id}", json=change)
        checked = await operator.post(f"/api/model/{model_id}/check")
        listed = next(m for m in (await operator.get("/api/model")).json()["data"] if m["id"] == model_id)
    assert checked.status_code == 200, checked.text
    return edited, checked.json()["data"], listed


async def test_moving_the_address_without_the_key_is_refused_and_the_new_host_never_gets_it(
    stack: Stack, old_host: FakeOpenAI, new_host: FakeOpenAI, unique: str
) -> None:
    old_host.reset()
    new_host.reset()
    model = await register(stack, model_body(f"moved-{unique}", old_host.base_url, OLD_KEY))

    edited, checked, listed = await edit_and_check(stack, model["id"], {"credential": {"api_base": new_host.base_url}})
    assert edited.status_code == 400 and edited.json()["message"] == str(KEY_FOR_NEW_ADDRESS), edited.text
    assert listed["api_base"] == old_host.base_url and listed["key_hint"] == "…1234", "nothing changed"
    assert checked["ok"] is True, checked
    assert new_host.requests == [], "the new address never hears of the model"
    assert authorizations(old_host) == [f"Bearer {OLD_KEY}"]

    cosmetic = old_host.base_url.replace("http://", "HTTP://") + "/"
    edited, checked, listed = await edit_and_check(stack, model["id"], {"credential": {"api_base": cosmetic}})
    assert edited.status_code == 200, edited.text
    assert listed["key_hint"] == "…1234" and checked["ok"] is True, "the same address keeps its key"
    assert authorizations(old_host) == [f"Bearer {OLD_KEY}"] * 2 and new_host.requests == []

    moved = {"credential": {"api_base": new_host.base_url, "api_key": NEW_KEY}}
    edited, checked, listed = await edit_and_check(stack, model["id"], moved)
    assert edited.status_code == 200 and listed["api_base"] == new_host.base_url and checked["ok"] is True
    assert authorizations(new_host) == [f"Bearer {NEW_KEY}"], "the new address gets only the key entered for it"
    assert all(OLD_KEY not in r.headers.get("authorization", "") for r in new_host.requests)


async def test_moving_with_an_empty_key_drops_the_stored_one_and_a_keyless_model_moves_freely(
    stack: Stack, old_host: FakeOpenAI, new_host: FakeOpenAI, unique: str
) -> None:
    old_host.reset()
    new_host.reset()
    model = await register(stack, model_body(f"emptied-{unique}", old_host.base_url, OLD_KEY))
    emptied = {"credential": {"api_base": new_host.base_url, "api_key": ""}}
    edited, checked, listed = await edit_and_check(stack, model["id"], emptied)
    assert edited.status_code == 200 and listed["key_hint"] == "" and checked["ok"] is True, edited.text
    assert all(OLD_KEY not in header for header in authorizations(new_host))

    keyless = await register(stack, model_body(f"keyless-{unique}", old_host.base_url))
    edited, checked, listed = await edit_and_check(
        stack, keyless["id"], {"credential": {"api_base": new_host.base_url}}
    )
    assert edited.status_code == 200 and listed["api_base"] == new_host.base_url, edited.text


@pytest.mark.parametrize(
    ("before", "after", "same"),
    [
        ("https://api.example.com/v1", "HTTPS://API.EXAMPLE.COM/v1/", True),
        ("https://api.example.com/v1", "https://api.example.com:443/v1", True),
        ("http://10.0.0.5/v1", "http://10.0.0.5:80/v1//", True),
        ("https://api.example.com/v1", "http://api.example.com/v1", False),
        ("https://api.example.com/v1", "https://api.example.com:8443/v1", False),
        ("https://api.example.com/v1", "https://api.example.com/v2", False),
        ("https://api.example.com/v1", "https://api.example.com.evil.test/v1", False),
        ("https://user@api.example.com/v1", "https://api.example.com/v1", True),
        ("http://api.example.com:abc/v1", "http://api.example.com:def/v1", False),
    ],
)
def test_addresses_compare_by_scheme_host_port_and_path(before: str, after: str, same: bool) -> None:
    assert (address(before) == address(after)) is same
