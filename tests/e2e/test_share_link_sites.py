"""Which sites may embed a share link's page (MaxKB's ``white_active``/``white_list``): any site
by default; once limited, only the listed ones, through the page's ``frame-ancestors``, which the
browser enforces (tests/browser/test_embed_page_sites.py shows it in Chromium). A list that is
not made of sites (a path, a keyword, a second directive) is refused whole and nothing is kept."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_share_link_rotation_http import new_link, put_link, shown_link
from tests.harness import Stack


def frame_ancestors(policy: str) -> str:
    [directive] = [d.strip() for d in policy.split(";") if d.strip().startswith("frame-ancestors")]
    return directive


async def page_policy(stack: Stack, access_token: str) -> str:
    async with stack.http(anonymous=True) as anyone:
        page = await anyone.get(f"/ui/share/{access_token}")
    assert page.status_code == 200, page.text
    return str(page.headers["content-security-policy"])


async def test_a_link_is_embeddable_anywhere_until_limited_to_its_sites(stack: Stack, unique: str) -> None:
    app_id, link = await new_link(stack, f"sites-{unique}")
    assert frame_ancestors(await page_policy(stack, link["access_token"])) == "frame-ancestors *"
    first = await shown_link(stack, app_id)
    assert (first["white_active"], first["white_list"]) == (False, [])

    limited = await put_link(
        stack,
        app_id,
        {"white_active": True, "white_list": [" https://Shop.Example.com/ ", "*.example.org", "http://127.0.0.1:8080"]},
    )

    assert limited.status_code == 200, limited.text
    sites = ["https://shop.example.com", "*.example.org", "http://127.0.0.1:8080"]
    assert (await shown_link(stack, app_id))["white_list"] == sites
    policy = await page_policy(stack, link["access_token"])
    assert frame_ancestors(policy) == "frame-ancestors 'self' " + " ".join(sites)
    assert "script-src 'self'" in policy, "the rest of the page's policy is unchanged"

    opened = await put_link(stack, app_id, {"white_active": False})
    assert opened.status_code == 200, opened.text
    assert frame_ancestors(await page_policy(stack, link["access_token"])) == "frame-ancestors *"
    assert (await shown_link(stack, app_id))["white_list"] == sites, "the list is kept for the next time"


async def test_limited_to_no_site_only_the_gateway_may_frame_it(stack: Stack, unique: str) -> None:
    app_id, link = await new_link(stack, f"sites-none-{unique}")
    limited = await put_link(stack, app_id, {"white_active": True, "white_list": []})
    assert limited.status_code == 200, limited.text
    assert frame_ancestors(await page_policy(stack, link["access_token"])) == "frame-ancestors 'self'"


async def test_an_unknown_link_and_the_operator_page_keep_their_policies(stack: Stack) -> None:
    assert frame_ancestors(await page_policy(stack, "0123456789abcdef")) == "frame-ancestors *"
    async with stack.http(anonymous=True) as anyone:
        admin = await anyone.get("/ui/admin")
    assert frame_ancestors(admin.headers["content-security-policy"]) == "frame-ancestors 'none'"


@pytest.mark.parametrize(
    "white_list",
    [
        ["https://shop.example.com; script-src *"],
        ["'self'"],
        ["'unsafe-inline'"],
        ["javascript:alert(1)"],
        ["https://shop.example.com/checkout"],
        ["shop example com"],
        ["*"],
        ["ftp://files.example.com"],
        ["https://shop.example.com:99999"],
        ["data:"],
        ["https://good.example.com", "https://bad.example.com,https://evil.example"],
        [f"site{n}.example.com" for n in range(51)],
    ],
)
async def test_a_list_that_is_not_made_of_sites_is_refused_and_nothing_is_kept(
    stack: Stack, unique: str, white_list: list[str]
) -> None:
    app_id, link = await new_link(stack, f"sites-bad-{unique}")
    kept = await put_link(stack, app_id, {"white_active": True, "white_list": ["https://kept.example.com"]})
    assert kept.status_code == 200, kept.text

    refused = await put_link(stack, app_id, {"white_active": False, "white_list": white_list})

    assert refused.status_code == 400, refused.text
    message: Any = refused.json()["message"]
    assert "is not a site" in message or "at most 50 sites" in message, message
    shown = await shown_link(stack, app_id)
    assert (shown["white_active"], shown["white_list"]) == (True, ["https://kept.example.com"])
    policy = await page_policy(stack, link["access_token"])
    assert frame_ancestors(policy) == "frame-ancestors 'self' https://kept.example.com"
