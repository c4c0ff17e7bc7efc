"""KB_TRUSTED_PROXIES → uvicorn: the client address and scheme the app sees, from whom the
forwarding headers are believed, and the sentence a bad entry stops the start with."""

from __future__ import annotations

import pytest
from starlette.types import Receive, Scope, Send

from gateway.edge.proxies import trusted_proxies
from gateway.edge.server_config import http_config
from kbcore.settings import Settings, SettingsError

FORGED = [(b"x-forwarded-for", b"203.0.113.9"), (b"x-forwarded-proto", b"https")]


async def what_the_app_sees(setting: str, peer: str, headers: list[tuple[bytes, bytes]] = FORGED) -> tuple[str, str]:
    """(client host, scheme) the gateway's app is called with, for one request from ``peer``
    through the uvicorn config ``http_config`` builds."""
    seen: Scope = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.update(scope)

    config = http_config(app, Settings(trusted_proxies=setting), log_config=None)
    config.load()
    scope = {"type": "http", "scheme": "http", "client": (peer, 50000), "headers": headers, "path": "/"}
    await config.loaded_app(scope, None, None)
    return seen["client"][0], seen["scheme"]


async def nothing(scope: Scope, receive: Receive, send: Send) -> None:
    """An app for a config that is only built, never served."""


async def test_with_no_trusted_proxies_the_headers_are_ignored_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")  # uvicorn's own variable: not consulted
    config = http_config(nothing, Settings(), log_config=None)
    assert config.proxy_headers is False and config.forwarded_allow_ips == []
    assert await what_the_app_sees("", "127.0.0.1") == ("127.0.0.1", "http")
    assert await what_the_app_sees("", "::1") == ("::1", "http")


async def test_a_trusted_proxys_headers_are_believed_and_nobody_elses() -> None:
    assert await what_the_app_sees("127.0.0.1", "127.0.0.1") == ("203.0.113.9", "https")
    assert await what_the_app_sees("127.0.0.1", "127.0.0.2") == ("127.0.0.2", "http")
    assert await what_the_app_sees("127.0.0.1", "192.0.2.1") == ("192.0.2.1", "http")


async def test_networks_and_ipv6_proxies_are_trusted() -> None:
    assert await what_the_app_sees("10.0.0.0/8, fd00::/8", "10.20.30.40") == ("203.0.113.9", "https")
    assert await what_the_app_sees("10.0.0.0/8, fd00::/8", "fd00::7") == ("203.0.113.9", "https")
    assert await what_the_app_sees("10.0.0.0/8, fd00::/8", "11.0.0.1") == ("11.0.0.1", "http")


async def test_an_ipv4_proxy_is_trusted_as_a_dual_stack_listener_sees_it() -> None:
    """KB_HTTP_HOST=:: accepts IPv4 peers as IPv4-mapped IPv6 addresses."""
    assert await what_the_app_sees("127.0.0.1", "::ffff:127.0.0.1") == ("203.0.113.9", "https")
    assert await what_the_app_sees("10.0.0.0/8", "::ffff:10.1.1.1") == ("203.0.113.9", "https")
    assert await what_the_app_sees("10.0.0.0/8", "::ffff:11.1.1.1") == ("::ffff:11.1.1.1", "http")


async def test_the_client_is_the_address_the_trusted_proxy_appended_not_what_the_client_claimed() -> None:
    """nginx appends its peer to whatever X-Forwarded-For the client sent: the rightmost
    address that is not a trusted proxy is the client."""
    chain = [(b"x-forwarded-for", b"198.51.100.1, 203.0.113.9")]
    assert await what_the_app_sees("127.0.0.1", "127.0.0.1", chain) == ("203.0.113.9", "http")
    through_two = [(b"x-forwarded-for", b"198.51.100.1, 203.0.113.9, 10.0.0.5")]
    assert await what_the_app_sees("127.0.0.1, 10.0.0.0/8", "127.0.0.1", through_two) == ("203.0.113.9", "http")


def test_the_setting_is_normalised_for_uvicorn() -> None:
    assert trusted_proxies("") == [] and trusted_proxies(" , ") == []
    assert trusted_proxies(" 127.0.0.1 , 10.1.2.3/8,::1") == [
        "127.0.0.1",
        "::ffff:7f00:1",
        "10.0.0.0/8",
        "::ffff:a00:0/104",
        "::1",
    ]
    assert trusted_proxies("192.0.2.7/32") == ["192.0.2.7", "::ffff:c000:207"]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ("proxy.internal", "'proxy.internal' is not an IP address or a network"),
        ("10.0.0.0/33", "'10.0.0.0/33' is not an IP address or a network"),
        ("[::1]", "'[::1]' is not an IP address or a network"),
        ("127.0.0.1:8080", "'127.0.0.1:8080' is not an IP address or a network"),
        ("*", "'*' would let every caller choose its own address"),
    ],
)
def test_an_entry_that_is_not_an_address_or_network_stops_the_start(entry: str, said: str) -> None:
    with pytest.raises(SettingsError, match="KB_TRUSTED_PROXIES") as refused:
        http_config(nothing, Settings(trusted_proxies=f"127.0.0.1,{entry}"), log_config=None)
    assert said in str(refused.value)
    assert Settings.from_env({"KB_TRUSTED_PROXIES": entry}).trusted_proxies == entry, "read as written, judged at start"
