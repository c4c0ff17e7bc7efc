"""The command-line client's settings: its own variables, read through the shared declarations,
and nothing meant for the services; and which token it sends."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.client import cli_settings, credential, default_url
from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE
from kbcore.settings import Settings, SettingsError


def test_the_client_reads_its_token_and_the_gateway_address() -> None:
    settings = cli_settings({"KB_TOKEN": "application-abc", "KB_HTTP_HOST": "10.0.0.5", "KB_HTTP_PORT": "9000"})
    assert settings.cli_token == "application-abc"
    assert default_url(settings) == "http://10.0.0.5:9000"


def test_a_listen_everywhere_address_becomes_loopback_and_ipv6_is_bracketed() -> None:
    assert default_url(cli_settings({"KB_HTTP_HOST": "0.0.0.0"})) == "http://127.0.0.1:8080"
    assert default_url(cli_settings({"KB_HTTP_HOST": "::1"})) == "http://[::1]:8080"


def test_a_services_variable_even_unreadable_does_not_stop_the_client() -> None:
    settings = cli_settings({"KB_AGENT_MAX_ROUNDS": "three", "KB_ADMIN_TOKEN": "s3cret"})
    assert settings.agent_max_rounds == Settings().agent_max_rounds, "the services' settings are not read"
    assert settings.admin_token == ""


def test_the_token_is_kb_token_else_the_local_operator_token_else_none(tmp_path: Path) -> None:
    """A local deployment's ``operator.token`` is used only when KB_TOKEN is unset; the client
    never creates it, and ``--token`` (even empty) wins over both."""
    env = {"KB_DATA_DIR": str(tmp_path)}
    assert credential(cli_settings(env), None) == "", "no token anywhere: no Authorization header"
    assert not (tmp_path / LOCAL_TOKEN_FILE).exists(), "the client does not create the operator token"
    (tmp_path / LOCAL_TOKEN_FILE).write_text("local-operator\n")
    assert credential(cli_settings(env), None) == "local-operator"
    assert credential(cli_settings({**env, "KB_TOKEN": "kbp_mine"}), None) == "kbp_mine"
    assert credential(cli_settings({**env, "KB_TOKEN": "kbp_mine"}), "application-x") == "application-x"
    assert credential(cli_settings(env), "") == ""


def test_an_unreadable_operator_token_means_no_token(tmp_path: Path) -> None:
    (tmp_path / LOCAL_TOKEN_FILE).mkdir()  # unreadable as a file, whoever runs the test
    assert credential(cli_settings({"KB_DATA_DIR": str(tmp_path)}), None) == ""


def test_an_unreadable_client_variable_fails_loudly() -> None:
    with pytest.raises(SettingsError, match="KB_HTTP_PORT"):
        cli_settings({"KB_HTTP_PORT": "eighty"})
