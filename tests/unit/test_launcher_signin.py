"""What ``make run`` prints about signing in (tools/stack.py's banner) and the one-time sign-in
links ``python -m tools.signin_link`` makes, on a SQLite database of the test's own: each link on
the audit trail as the tool's, and printed at the address people open (``KB_PUBLIC_URL``, else
the gateway's configured host and port)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.addresses.gateway_address import local_url, public_url
from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.db.tables import AuditEvent, UserAccount
from kbcore.settings import Settings, SettingsError
from services.chat.accounts.first_admin import ensure_first_admin
from services.chat.accounts.user_tokens import UserTokens
from tools.signin_link import TOOL, NoSuchUser, new_signin_code, run, signin_url
from tools.stack import banner as launcher_banner

INFO: dict[str, object] = {"url": "http://127.0.0.1:8080", "application_id": "app-1", "documents": 16}


@pytest.fixture
async def own_sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    url = f"sqlite:///{tmp_path / 'kb.sqlite3'}"
    upgrade(url)
    engine = create_engine(url)
    yield session_factory(engine)
    await engine.dispose()


async def test_a_new_link_signs_admin_in_once_and_needs_an_active_user(
    own_sessions: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path)
    with pytest.raises(NoSuchUser, match="'admin' is no user"):
        await new_signin_code(own_sessions, settings)
    first = await ensure_first_admin(own_sessions, settings)
    assert first and await ensure_first_admin(own_sessions, settings) is None, "one first administrator"
    code = await new_signin_code(own_sessions, settings)
    assert code != first
    tokens = UserTokens(own_sessions, settings)
    async with own_sessions.begin() as session:
        user_id = await tokens.consume_link(session, code)
    async with own_sessions.begin() as session:
        assert await tokens.consume_link(session, first) == user_id, "the first link still works once"
    async with own_sessions.begin() as session:
        await session.execute(update(UserAccount).values(is_active=False))
    with pytest.raises(NoSuchUser, match="deactivated"):
        await new_signin_code(own_sessions, settings)


def test_the_link_and_the_gateway_address_on_this_machine() -> None:
    assert signin_url("http://127.0.0.1:8080", "abc") == "http://127.0.0.1:8080/ui/admin#signin=abc"
    assert local_url(Settings(http_host="0.0.0.0", http_port=9000)) == "http://127.0.0.1:9000"
    assert local_url(Settings(http_host="::1")) == "http://[::1]:8080"
    assert local_url(Settings(http_host="10.0.0.5", http_port=9000), port=41234) == "http://10.0.0.5:41234"


def test_the_address_people_open_is_the_public_url_when_one_is_set() -> None:
    assert public_url(Settings(http_port=9000)) == "http://127.0.0.1:9000"
    assert public_url(Settings(), "http://127.0.0.1:41234") == "http://127.0.0.1:41234", "where it was found"
    public = Settings(public_url=" https://kb.example.com/knowledge/ ", http_port=9000)
    assert public_url(public) == "https://kb.example.com/knowledge"
    assert public_url(public, "http://127.0.0.1:41234") == "https://kb.example.com/knowledge"
    for bad in ("kb.example.com", "ftp://kb.example.com", "https://", "https://kb.example.com/?a=1", "http://[::1"):
        with pytest.raises(SettingsError, match="KB_PUBLIC_URL"):
            public_url(Settings(public_url=bad))


async def link_rows(sessions: async_sessionmaker[AsyncSession]) -> list[AuditEvent]:
    async with sessions() as session:
        found = await session.scalars(
            select(AuditEvent).where(AuditEvent.action == "user.create_sign_in_link").order_by(AuditEvent.at)
        )
        return list(found)


async def test_each_link_the_tool_makes_is_on_the_audit_trail_as_the_tools(
    own_sessions: async_sessionmaker[AsyncSession], tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path)
    launcher_code = await ensure_first_admin(own_sessions, settings)  # as make run does: the launcher's own row
    tool_code = await new_signin_code(own_sessions, settings)
    first, made = await link_rows(own_sessions)
    assert (first.actor_kind, first.actor_name, first.object_name) == ("service", "", "admin")
    assert "first administrator" in first.detail
    assert (made.actor_kind, made.actor_name, made.object_kind, made.object_name) == ("service", TOOL, "user", "admin")
    assert made.object_id == first.object_id and made.detail.startswith(f"on the command line ({TOOL}), run as ")
    async with own_sessions() as session:
        rows = list(await session.scalars(select(AuditEvent)))
    texts = [f"{row.object_name} {row.detail}" for row in rows]
    assert launcher_code and not [text for text in texts if launcher_code in text or tool_code in text], "no code"


@pytest.mark.parametrize(
    ("environment", "address"),
    [
        ({"KB_HTTP_PORT": "9123"}, "http://127.0.0.1:9123"),
        ({"KB_HTTP_HOST": "0.0.0.0", "KB_HTTP_PORT": "18080"}, "http://127.0.0.1:18080"),
        ({"KB_HTTP_PORT": "9123", "KB_PUBLIC_URL": "https://kb.example.com/"}, "https://kb.example.com"),
    ],
)
async def test_the_tool_prints_the_configured_address_and_records_the_link(
    tmp_path: Path,
    own_sessions: async_sessionmaker[AsyncSession],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    environment: dict[str, str],
    address: str,
) -> None:
    monkeypatch.setenv("KB_DATA_DIR", str(tmp_path))  # the database own_sessions opened there
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert await run("admin") == 0, "a deployment without users: the tool creates admin first"
    assert await run("admin") == 0
    printed = capsys.readouterr().out
    codes = re.findall(re.escape(f"{address}/ui/admin#signin=") + r"([\w-]+)\n", printed)
    assert len(codes) == 2 and len(set(codes)) == 2, printed
    rows = await link_rows(own_sessions)
    assert [(r.actor_kind, r.actor_name) for r in rows] == [("service", TOOL)] * 2
    assert all(r.detail.startswith(f"on the command line ({TOOL}), run as ") for r in rows)


async def test_an_unreadable_public_url_stops_the_tool_before_it_makes_a_link(
    tmp_path: Path, own_sessions: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("KB_DATABASE_URL", raising=False)
    monkeypatch.setenv("KB_PUBLIC_URL", "kb.example.com")
    with pytest.raises(SettingsError, match="KB_PUBLIC_URL"):
        await run("admin")
    assert await link_rows(own_sessions) == []
    async with own_sessions() as session:
        assert await session.scalar(select(UserAccount)) is None, "nothing created either"


def test_the_banner_prints_the_first_link_or_how_to_get_one_and_only_pages_that_answer() -> None:
    settings = Settings(data_dir=Path("/srv/kb data"))
    first = launcher_banner(INFO, settings, "CODE")
    assert "http://127.0.0.1:8080/ui/admin#signin=CODE" in first and "30 minutes" in first
    assert "/docs" not in first, "KB_HTTP_DOCS is off: /docs is 404"
    assert "/ui/chat/app-1" not in first, "the chat page needs a credential"
    assert "TOKEN=$(cat '/srv/kb data/operator.token')" in first and 'Bearer $TOKEN"' in first
    assert "KB_DEV_LOOPBACK_OPERATOR" not in first
    later = launcher_banner(INFO, settings, None)
    assert "#signin=" not in later and "python -m tools.signin_link" in later


def test_the_banner_warns_when_loopback_callers_are_the_operator() -> None:
    settings = Settings(dev_loopback_operator=True, http_docs=True, admin_token="s3cret")
    text = launcher_banner(INFO, settings, None)
    [warning] = [line for line in text.splitlines() if "KB_DEV_LOOPBACK_OPERATOR" in line]
    assert "operator" in warning
    assert "http://127.0.0.1:8080/ui/chat/app-1" in text and "http://127.0.0.1:8080/docs" in text
    assert "TOKEN=$KB_ADMIN_TOKEN" in text and "s3cret" not in text, "the token itself is never printed"
