"""The CLI's side of the HTTP API: the client, the envelope and the one error type."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import httpx

from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE
from kbcore.settings import Settings

# Connecting is quick or broken; reading waits on retrieval and generation (the gateway sends
# a keep-alive every 15 s while an answer runs) and on embedding a large upload.
TIMEOUT = httpx.Timeout(300.0, connect=10.0)


class CliError(Exception):
    """A failure worth one line on stderr and exit code 1 (the gateway's message when it sent one)."""


# The settings the client uses; the rest are the services' and are not read here. The data
# folder only to find a local deployment's operator token (``credential``).
CLI_FIELDS = frozenset({"http_host", "http_port", "cli_token", "data_dir"})
SIGN_IN_HINT = (
    "Sign in on the operator page ({page}), create a personal token under 用户 → 个人令牌, and set KB_TOKEN to it."
)


def cli_settings(env: Mapping[str, str] | None = None) -> Settings:
    """The client's settings, read through the shared declarations but only the client's own:
    a variable meant for the services, even an unreadable one, does not stop the client."""
    env = os.environ if env is None else env
    names = {field.metadata["spec"].env for field in dataclasses.fields(Settings) if field.name in CLI_FIELDS}
    return Settings.from_env({name: value for name, value in env.items() if name in names})


def default_url(settings: Settings) -> str:
    """Where ``python -m gateway`` listens by default on this machine, from the same settings."""
    host = settings.http_host
    if host in {"0.0.0.0", "::", ""}:  # a listen-on-everything address is not one to connect to
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{settings.http_port}"


def local_operator_token(settings: Settings) -> str:
    """The operator token of a deployment on this machine (``$KB_DATA_DIR/operator.token``, which
    the services create when ``KB_ADMIN_TOKEN`` is unset), or "" when it cannot be read: this
    client never creates it, and someone else's deployment keeps it private."""
    try:
        return (settings.data_dir / LOCAL_TOKEN_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def credential(settings: Settings, given: str | None) -> str:
    """The token to send: ``--token`` when given (even empty), else ``KB_TOKEN``, else the local
    deployment's operator token, else "" (no ``Authorization`` header: a 401 says what to do)."""
    if given is not None:
        return given
    return settings.cli_token or local_operator_token(settings)


def make_client(url: str, token: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT)


def error_message(response: httpx.Response) -> str:
    """The envelope's message when the gateway sent one, else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("message"):
        message = str(body["message"])
    else:
        message = response.text.strip()[:200] or response.reason_phrase
    if response.status_code == 401:
        return f"HTTP 401: {message}\n{SIGN_IN_HINT.format(page=response.url.join('/ui/admin'))}"
    return f"HTTP {response.status_code}: {message}"


def request_data(client: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """Call a JSON route and unwrap the envelope's ``data``; any HTTP error becomes a CliError."""
    response = client.request(method, path, **kwargs)
    if response.is_error:
        raise CliError(error_message(response))
    try:
        body = response.json()
    except ValueError as exc:
        raise CliError(f"{method} {path}: the gateway answered with something that is not JSON") from exc
    return body.get("data") if isinstance(body, dict) else body
