"""No secret reaches a log line, an export or an error body (docs/access.md, People and roles
and The audit trail: passwords are kept only as argon2id hashes, tokens only as SHA-256, and the
trail holds no value of a secret).

The stack runs as separate processes (``python -m tools.stack --ephemeral``) at the most
talkative setting, ``KB_LOG_LEVEL=DEBUG`` with ``KB_LOG_FORMAT=json``, so every library's debug
lines are written too. Through HTTP, as the operator and as the people it creates, the test
does everything an account touches: sign-ins right and wrong, a password change and an
administrator's reset, personal tokens made and revoked, a one-time sign-in link redeemed and
redeemed again, an API key made and rotated, a share link and its visitor, one question with
each kind of credential, both CSV exports, and the refusals of a deleted person's tokens. Then
it stops the stack and reads everything the processes wrote (their stdout and stderr, and any
log file in the data folder), the two exports and every error body: none may hold a password, a
token, a key, a sign-in code, the operator token, the SHA-256 of any of them, or an argon2 hash.

On SQLite the stack uses a database file of its own; when the suite's ``KB_DATABASE_URL`` is a
PostgreSQL URL, the stack uses that database (a driver's error text there could carry a
statement's parameters).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, make_url, select

from kbcore.db.engine import sync_url
from kbcore.db.tables import UserAccount
from tests.process_stack import StackProcesses, stack_processes
from tests.shared_tls import TLS
from tests.sse_client import parse_frames

pytestmark = pytest.mark.slow

QUESTION = "云岭县人民医院ICU每天的探视时间是几点到几点？"
SERVICES = {"gateway", "chat", "context", "retrieval"}
LOG_SUFFIXES = (".log", ".out", ".err", ".jsonl")


@dataclass
class Seen:
    """What the test handed out and received: the secrets by name, the bodies of every refusal
    (and every error event of a stream), the two exports, and the people it created."""

    secrets: dict[str, str] = field(default_factory=dict)
    error_bodies: list[str] = field(default_factory=list)
    exports: dict[str, str] = field(default_factory=dict)
    usernames: list[str] = field(default_factory=list)
    logs: dict[str, str] = field(default_factory=dict)  # every file the processes wrote, by path
    password_hashes: list[str] = field(default_factory=list)
    ran: tuple[datetime, datetime] | None = None  # when the scenario began and ended

    def keep(self, name: str, value: str) -> str:
        assert value and value not in self.secrets.values(), f"{name}: empty or not fresh"
        self.secrets[name] = value
        return value

    def record(self, response: httpx.Response) -> None:
        """Response hook: the body of a refusal, and the error events of a stream."""
        response.read()
        if response.status_code >= 400:
            self.error_bodies.append(response.text)
        elif response.headers.get("content-type", "").startswith("text/event-stream"):
            self.error_bodies += [f.raw.decode() for f in parse_frames(response.content) if f.kind == "error"]


class Caller:
    """HTTP clients of the running stack that record what comes back in ``seen``."""

    def __init__(self, stack: StackProcesses, seen: Seen) -> None:
        self.url = str(stack.info["url"])
        self.app = str(stack.info["application_id"])
        self.operator_token = stack.operator_token
        self.seen = seen

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        hooks = {"response": [self.seen.record]}
        return httpx.Client(verify=TLS, base_url=self.url, headers=headers, timeout=120, event_hooks=hooks)

    def operator(self) -> httpx.Client:
        return self.client(self.operator_token)


def data(response: httpx.Response) -> Any:
    assert response.status_code == 200, f"{response.request.method} {response.request.url.path}: {response.text}"
    return response.json()["data"]


def refused(response: httpx.Response, *statuses: int) -> None:
    assert response.status_code in statuses, f"{response.request.url.path}: {response.status_code} {response.text}"
    assert response.json()["message"], "a refusal says why"


def password(seen: Seen, name: str) -> str:
    """A password no other text could hold by chance."""
    return seen.keep(f"password {name}", f"Pw-{name}-{secrets.token_hex(6)}!")


# --- the scenario -------------------------------------------------------------------------------


def create_people(caller: Caller, seen: Seen) -> dict[str, dict[str, Any]]:
    """Four people: two editors of the demo application, a viewer whose password is reset, and one
    who signs in by link only."""
    suffix = secrets.token_hex(3)
    people: dict[str, dict[str, Any]] = {}
    with caller.operator() as admin:
        for name, role in (("alice", "editor"), ("bob", "viewer"), ("carol", "editor"), ("dave", "viewer")):
            body: dict[str, Any] = {"username": f"{name}-{suffix}", "password": password(seen, name), "role": role}
            if role == "editor":
                body["applications"] = [caller.app]
            people[name] = data(admin.post("/api/user_manage", json=body))
            seen.usernames.append(people[name]["username"])
    return people


def sign_in(caller: Caller, username: str, secret: str) -> httpx.Response:
    with caller.client() as anonymous:
        return anonymous.post("/api/user/login", json={"username": username, "password": secret})


def passwords_and_sessions(caller: Caller, seen: Seen, people: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Sign-ins right and wrong, a change of one's own password, an administrator's reset."""
    alice, bob = people["alice"], people["bob"]
    refused(sign_in(caller, alice["username"], password(seen, "wrong")), 401)
    refused(sign_in(caller, f"nobody-{secrets.token_hex(3)}", seen.secrets["password wrong"]), 401)
    alice_session = seen.keep("session alice", data(sign_in(caller, alice["username"], seen.secrets["password alice"])))
    changed = password(seen, "alice-changed")
    with caller.client(alice_session) as person:
        body = {"current_password": seen.secrets["password alice"], "password": changed, "re_password": changed}
        assert data(person.put("/api/user/re_password", json=body)) is True
        wrong_current = {**body, "current_password": seen.secrets["password wrong"]}
        refused(person.put("/api/user/re_password", json=wrong_current), 400, 401, 403)
    refused(sign_in(caller, alice["username"], seen.secrets["password alice"]), 401)
    reset = password(seen, "bob-reset")
    with caller.operator() as admin:
        body = {"password": reset, "re_password": reset}
        assert data(admin.put(f"/api/user_manage/{bob['id']}/re_password", json=body)) is True
    seen.keep("session bob", data(sign_in(caller, bob["username"], reset)))
    return {"alice": alice_session}


def personal_tokens(caller: Caller, seen: Seen, alice_session: str) -> str:
    """Two personal tokens; one revoked and refused afterwards. The other is returned."""
    with caller.client(alice_session) as person:
        kept = data(person.post("/api/user/token", json={"name": "script"}))
        dropped = data(person.post("/api/user/token", json={"name": "dropped"}))
        seen.keep("personal token dropped", dropped["token"])
        assert data(person.delete(f"/api/user/token/{dropped['id']}")) is True
    with caller.client(dropped["token"]) as script:
        refused(script.get("/api/user"), 401)
    return seen.keep("personal token alice", kept["token"])


def signin_link(caller: Caller, seen: Seen, dave: dict[str, Any]) -> None:
    """A one-time link made, redeemed, and redeemed again (refused)."""
    with caller.operator() as admin:
        code = seen.keep("sign-in code dave", data(admin.post(f"/api/user_manage/{dave['id']}/signin_link"))["code"])
    with caller.client() as anonymous:
        seen.keep("session dave", data(anonymous.post("/api/user/signin_link", json={"code": code})))
        refused(anonymous.post("/api/user/signin_link", json={"code": code}), 401, 404, 409)


def application_credentials(caller: Caller, seen: Seen) -> tuple[str, str]:
    """An API key made and rotated (the old one refused), a share link and its visitor."""
    with caller.operator() as admin:
        made = data(admin.post(f"/api/application/{caller.app}/api_key"))
        seen.keep("api key before rotation", made["secret_key"])
        rotated = data(admin.post(f"/api/application/{caller.app}/api_key/{made['id']}/rotate"))
        key = seen.keep("api key", rotated["secret_key"])
        link = data(admin.post(f"/api/application/{caller.app}/access_token", json={"access_num": 100}))
        access_token = seen.keep("share link", link["access_token"])
    with caller.client(made["secret_key"]) as old:
        refused(old.get(f"/api/application/{caller.app}/chat/open"), 401)
    with caller.client() as anonymous:
        signed = anonymous.post("/api/application/authentication", json={"access_token": access_token})
        visitor = seen.keep("visitor token", data(signed))
    return key, visitor


def ask_as(caller: Caller, token: str) -> None:
    """One question, answered to its end, with ``token``."""
    with caller.client(token) as client:
        chat_id = data(client.get(f"/api/application/{caller.app}/chat/open"))
        answered = client.post(f"/api/application/chat_message/{chat_id}", json={"message": QUESTION})
        assert answered.status_code == 200, answered.text
        frames = parse_frames(answered.content)
    assert frames[-1].kind == "chunk" and frames[-1].data["is_end"] is True, frames[-3:]


def deleted_person(caller: Caller, seen: Seen, carol: dict[str, Any]) -> None:
    """A person's session and personal token, refused once the person is deleted."""
    session = seen.keep("session carol", data(sign_in(caller, carol["username"], seen.secrets["password carol"])))
    with caller.client(session) as person:
        token = seen.keep("personal token carol", data(person.post("/api/user/token", json={"name": "cli"}))["token"])
    with caller.operator() as admin:
        assert data(admin.delete(f"/api/user_manage/{carol['id']}")) is True
    for credential in (session, token):
        with caller.client(credential) as gone:
            refused(gone.get("/api/user"), 401)
            refused(gone.get(f"/api/application/{caller.app}/chat/open"), 401)


def exports(caller: Caller, seen: Seen) -> None:
    with caller.operator() as admin:
        audit = admin.get("/api/audit/export")
        log = admin.post(f"/api/application/{caller.app}/chat/export?format=csv")
    assert audit.status_code == 200 and log.status_code == 200, (audit.text[:300], log.text[:300])
    seen.exports = {"audit": audit.content.decode("utf-8-sig"), "log": log.content.decode("utf-8-sig")}


def run_scenario(caller: Caller, seen: Seen) -> None:
    began = datetime.now(UTC)
    seen.keep("operator token", caller.operator_token)
    people = create_people(caller, seen)
    sessions = passwords_and_sessions(caller, seen, people)
    personal = personal_tokens(caller, seen, sessions["alice"])
    signin_link(caller, seen, people["dave"])
    key, visitor = application_credentials(caller, seen)
    for token in (caller.operator_token, sessions["alice"], personal, key, visitor):
        ask_as(caller, token)
    deleted_person(caller, seen, people["carol"])
    exports(caller, seen)
    seen.ran = (began, datetime.now(UTC))


# --- the stack, and what it left behind ----------------------------------------------------------


def suite_postgres(request: pytest.FixtureRequest) -> str:
    """The suite's database when it is PostgreSQL (reset and migrated by its fixture first), else ""."""
    configured = os.environ.get("KB_DATABASE_URL", "")
    if configured and make_url(configured).get_backend_name() == "postgresql":
        url: str = request.getfixturevalue("database_url")
        return url
    return ""


def read_written(data_dir: Path, stack_log: Path) -> dict[str, str]:
    """The processes' output and every log file in the data folder."""
    written = {str(stack_log): stack_log.read_text(errors="replace")}
    for path in sorted(data_dir.rglob("*")):
        if path.is_file() and path.suffix in LOG_SUFFIXES and path != stack_log:
            written[str(path)] = path.read_text(errors="replace")
    return written


def stored_hashes(database_url: str, usernames: list[str]) -> list[str]:
    engine = create_engine(sync_url(database_url))
    try:
        with engine.connect() as connection:
            query = select(UserAccount.password_hash).where(UserAccount.username.in_(usernames))
            return [h for h in connection.scalars(query) if h]
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Seen]:
    postgres = suite_postgres(request)
    settings = {"KB_LOG_LEVEL": "DEBUG", "KB_LOG_FORMAT": "json", "PYTHONUNBUFFERED": "1"}
    if postgres:
        settings["KB_DATABASE_URL"] = postgres
    data_dir = tmp_path_factory.mktemp("secrets-stack")
    found = Seen()
    hospital = ["yunling_hospital_visiting_rules.md"]
    with stack_processes(data_dir, settings, stop=signal.SIGINT, documents=hospital) as stack:
        run_scenario(Caller(stack, found), found)
    assert stack.process.returncode == 0, "the stack stopped cleanly (every line written)"
    found.logs = read_written(data_dir, stack.log)
    found.password_hashes = stored_hashes(postgres or f"sqlite:///{data_dir / 'kb.sqlite3'}", found.usernames)
    yield found


def leaks(text: str, seen: Seen) -> list[str]:
    """What of the secrets (or their SHA-256, or a password's argon2 hash) ``text`` holds, by name."""
    found = [name for name, value in seen.secrets.items() if value in text]
    found += [
        f"SHA-256 of {name}"
        for name, value in seen.secrets.items()
        if not name.startswith("password") and hashlib.sha256(value.encode()).hexdigest() in text
    ]
    found += ["an argon2 hash" for h in seen.password_hashes if h in text or h.split("$")[-1] in text]
    if "$argon2" in text:
        found.append("an argon2 hash string ($argon2…)")
    return found


# --- the checks --------------------------------------------------------------------------------


def test_every_process_wrote_json_debug_lines_from_start_to_stop(seen: Seen) -> None:
    """Not vacuous: the output is there, at DEBUG, in JSON, from every service, from each one's
    start through the scenario to the gateway's shutdown. (No line names a request or an account
    event: the gateway writes no access log, and sign-ins go to the audit trail, not the log.)"""
    lines = [line for text in seen.logs.values() for line in text.splitlines()]
    records = [json.loads(line) for line in lines if line.startswith("{")]
    assert len(records) > 50, f"only {len(records)} JSON log lines"
    assert {r.get("service") for r in records} >= SERVICES
    assert {r["service"] for r in records if " service listening on " in r["message"]} >= SERVICES - {"gateway"}
    assert {r["service"] for r in records if r["message"].startswith("signal received")} >= SERVICES - {"gateway"}
    assert any(r["level"] == "DEBUG" for r in records), "KB_LOG_LEVEL=DEBUG took effect"
    assert any("gateway listening on http://" in r["message"] for r in records)
    stopped = [r for r in records if r["service"] == "gateway" and r["message"].startswith("Finished server process")]
    assert stopped, "written to the end"
    assert seen.ran is not None
    during = [r for r in records if seen.ran[0] <= datetime.fromisoformat(r["time"]) <= seen.ran[1]]
    assert {r["service"] for r in during} >= {"gateway", "chat"}, "written while the scenario ran"
    assert len(seen.secrets) >= 15 and len(seen.password_hashes) == 3, "carol was deleted; the other three remain"
    assert all(h.startswith("$argon2id$") for h in seen.password_hashes)


def writer(line: str) -> str:
    """Who wrote a line: the JSON line's service and logger, else the launcher's text."""
    if line.startswith("{"):
        record = json.loads(line)
        return f"{record['service']} {record['logger']}"
    return "launcher or banner text"


def test_no_log_line_holds_a_secret_its_hash_or_a_password_hash(seen: Seen) -> None:
    found: dict[str, set[str]] = {}
    for path, text in seen.logs.items():
        for line in text.splitlines():
            for name in leaks(line, seen):
                found.setdefault(name, set()).add(f"{Path(path).name}: {writer(line)}")
    report = "\n".join(f"{name}, in lines of {sorted(where)}" for name, where in sorted(found.items()))
    assert not found, f"secrets in the log:\n{report}"


def test_the_exports_hold_no_secret_but_do_hold_the_run(seen: Seen) -> None:
    assert "user.sign_in_failed" in seen.exports["audit"] and "user.change_password" in seen.exports["audit"]
    assert all(name in seen.exports["audit"] for name in seen.usernames)
    assert QUESTION in seen.exports["log"]
    found = {name: leaks(text, seen) for name, text in seen.exports.items()}
    assert not any(found.values()), found


def test_no_error_body_holds_a_secret(seen: Seen) -> None:
    assert len(seen.error_bodies) >= 11, seen.error_bodies
    found = [(body[:200], leaks(body, seen)) for body in seen.error_bodies if leaks(body, seen)]
    assert not found, found
