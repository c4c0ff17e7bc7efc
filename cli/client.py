"""The CLI's side of the HTTP API: the client, which asks for the run's language, the envelope,
and the gateway's refusals as the CLI's one error type."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any

import httpx

from cli.failure import CliError
from cli.words import Phrase
from gateway.labels import PERSONAL_TOKEN_WORDS, USER_WORDS
from kbcore.addresses.gateway_address import local_url
from kbcore.rpc.caller_token import LOCAL_TOKEN_FILE
from kbcore.settings import Settings, SettingsError
from kbcore.words.language import Language

# Connecting is quick or broken; reading waits on retrieval and generation (the gateway sends
# a keep-alive every 15 s while an answer runs) and on embedding a large upload.
TIMEOUT = httpx.Timeout(300.0, connect=10.0)

# The settings the client uses; the rest are the services' and are not read here. The data
# folder only to find a local deployment's operator token (``credential``).
CLI_FIELDS = frozenset({"http_host", "http_port", "cli_token", "data_dir"})
TOKEN_VARIABLE = "KB_TOKEN"
# Where the operator page keeps personal tokens, named as that page shows them: it is served in
# Chinese only for now, so its Chinese names are what a person of either language looks for.
TOKEN_MENU = f"{USER_WORDS['title']} → {PERSONAL_TOKEN_WORDS['title']}"


def client_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The environment's variables that are the client's own settings."""
    names = {field.metadata["spec"].env for field in dataclasses.fields(Settings) if field.name in CLI_FIELDS}
    return {name: value for name, value in env.items() if name in names}


def cli_settings(env: Mapping[str, str] | None = None) -> Settings:
    """The client's settings, read through the shared declarations but only the client's own:
    a variable meant for the services, even an unreadable one, does not stop the client."""
    env = os.environ if env is None else env
    return Settings.from_env(client_variables(env))


def unreadable_setting(env: Mapping[str, str]) -> CliError:
    """The failure ``cli_settings`` met, naming the variable and its value in the run's words
    (the settings' own message is English, for the services' logs)."""
    for name, value in client_variables(env).items():
        try:
            Settings.from_env({name: value})
        except SettingsError:
            return CliError("errors.setting", name=name, value=value)
    return CliError("errors.setting", name="?", value="?")


def default_url(settings: Settings) -> str:
    """Where ``python -m gateway`` listens by default on this machine, from the same settings."""
    return local_url(settings)


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


def make_client(url: str, token: str, language: Language) -> httpx.Client:
    """A client that asks every answer in ``language``, so the gateway's refusals read like the
    CLI's own lines around them."""
    headers: dict[str, str] = {"Accept-Language": language}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT)


def gateway_error(response: httpx.Response) -> CliError:
    """The envelope's message when the gateway sent one, else the start of the body; a 401 also
    says where to get a token."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("message"):
        message = str(body["message"])
    else:
        message = response.text.strip()[:200] or response.reason_phrase
    if response.status_code == 401:
        page = response.url.join("/ui/admin")
        hint = Phrase("errors.sign_in", {"page": page, "menu": TOKEN_MENU, "variable": TOKEN_VARIABLE})
        return CliError("errors.http_hinted", status=401, message=message, hint=hint)
    return CliError("errors.http", status=response.status_code, message=message)


def request_data(client: httpx.Client, method: str, path: str, **kwargs: Any) -> Any:
    """Call a JSON route and unwrap the envelope's ``data``; any HTTP error becomes a CliError."""
    response = client.request(method, path, **kwargs)
    if response.is_error:
        raise gateway_error(response)
    try:
        body = response.json()
    except ValueError as exc:
        raise CliError("errors.not_json", method=method, path=path) from exc
    return body.get("data") if isinstance(body, dict) else body


def connection_reason(exc: httpx.HTTPError) -> Phrase:
    """Why the gateway could not be talked to, in words for the two a person meets (nothing
    listens there, or it does not answer in time); any other by the error's name."""
    if isinstance(exc, httpx.ConnectError):
        return Phrase("errors.cannot_connect")
    if isinstance(exc, httpx.TimeoutException):
        return Phrase("errors.timed_out")
    return Phrase("errors.broken", {"kind": type(exc).__name__})
