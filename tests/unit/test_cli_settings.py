"""The command-line client's settings: its own variables, read through the shared declarations,
and nothing meant for the services."""

from __future__ import annotations

import pytest

from cli.client import cli_settings, default_url
from kbcore.settings import SettingsError


def test_the_client_reads_its_token_and_the_gateway_address() -> None:
    settings = cli_settings({"KB_TOKEN": "application-abc", "KB_HTTP_HOST": "10.0.0.5", "KB_HTTP_PORT": "9000"})
    assert settings.cli_token == "application-abc"
    assert default_url(settings) == "http://10.0.0.5:9000"


def test_a_listen_everywhere_address_becomes_loopback_and_ipv6_is_bracketed() -> None:
    assert default_url(cli_settings({"KB_HTTP_HOST": "0.0.0.0"})) == "http://127.0.0.1:8080"
    assert default_url(cli_settings({"KB_HTTP_HOST": "::1"})) == "http://[::1]:8080"


def test_a_services_variable_even_unreadable_does_not_stop_the_client() -> None:
    settings = cli_settings({"KB_AGENT_MAX_ROUNDS": "three", "KB_DATA_DIR": "/elsewhere"})
    assert str(settings.data_dir) == "data", "the services' settings are not read"


def test_an_unreadable_client_variable_fails_loudly() -> None:
    with pytest.raises(SettingsError, match="KB_HTTP_PORT"):
        cli_settings({"KB_HTTP_PORT": "eighty"})
