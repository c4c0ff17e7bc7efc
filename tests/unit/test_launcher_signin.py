"""What ``make run`` prints about signing in (tools/stack.py's banner) and the one-time sign-in
links ``python -m tools.signin_link`` makes, on a SQLite database of the test's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.engine import create_engine, session_factory
from kbcore.db.migrate import upgrade
from kbcore.db.tables import UserAccount
from kbcore.settings import Settings
from services.chat.accounts.first_admin import ensure_first_admin
from services.chat.accounts.user_tokens import UserTokens
from tools.signin_link import NoSuchUser, gateway_url, new_signin_code, signin_url
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
    assert gateway_url(Settings(http_host="0.0.0.0", http_port=9000)) == "http://127.0.0.1:9000"
    assert gateway_url(Settings(http_host="::1")) == "http://[::1]:8080"


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
