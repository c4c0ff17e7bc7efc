"""In the chat service's own terms: sign-in through one share link is limited per
minute across processes (a counter row in the database), a link keeps at most N visitors (the
oldest dropped, their tokens then refused with words to open the link again), and tokens expire."""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

import services.chat.access.visitors as visitors
from kbcore.db.tables import Application, Visitor, utcnow
from kbcore.errors import RateLimited, Unauthenticated
from kbcore.settings import Settings
from services.chat.access.credentials import VISITOR_EXPIRED, VISITOR_GONE, Credentials
from services.chat.access.visitors import VisitorPolicy

Sessions = async_sessionmaker[AsyncSession]


async def share_link(sessions: Sessions, credentials: Credentials, name: str) -> tuple[str, str]:
    async with sessions.begin() as session:
        application = Application(name=name)
        session.add(application)
    link = await credentials.set_access_token(application.id, access_num=5)
    return application.id, link.access_token


async def live_visitors(sessions: Sessions, application_id: str) -> int:
    async with sessions() as session:
        count = await session.scalar(
            select(func.count()).select_from(Visitor).where(Visitor.application_id == application_id)
        )
    return int(count or 0)


async def test_sign_in_per_link_is_limited_even_when_sign_ins_race(
    sessions: Sessions, unique: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One minute for the whole burst: one that crosses a minute's end may admit up to the limit
    # in each of the two (fixed windows; tests/services/test_rate_windows.py covers the boundary).
    monkeypatch.setattr(visitors, "minute_window", lambda: "2026-12-01T03:26")
    credentials = Credentials(sessions, VisitorPolicy(signins_per_minute=5))
    _, token = await share_link(sessions, credentials, f"limited-{unique}")
    _, other = await share_link(sessions, credentials, f"other-{unique}")
    # Two processes' worth of credentials over one database count together.
    twin = Credentials(sessions, VisitorPolicy(signins_per_minute=5))
    results = await asyncio.gather(*(c.new_visitor(token) for c in [credentials, twin] * 10), return_exceptions=True)
    admitted = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, RateLimited)]
    assert len(admitted) == 5 and len(refused) == 15, results
    assert "too many sign-ins through this share link" in str(refused[0])
    await credentials.new_visitor(other)  # another link has a limit of its own


async def test_a_link_keeps_at_most_n_visitors_and_drops_the_oldest(sessions: Sessions, unique: str) -> None:
    credentials = Credentials(sessions, VisitorPolicy(visitors_per_link=3))
    application_id, token = await share_link(sessions, credentials, f"bounded-{unique}")
    tokens = []
    for _ in range(5):
        _, visitor_token = await credentials.new_visitor(token)
        tokens.append(visitor_token)
        await asyncio.sleep(0.01)  # distinct sign-in times, so "oldest" is well defined
    assert await live_visitors(sessions, application_id) == 3
    for dropped in tokens[:2]:
        with pytest.raises(Unauthenticated, match="open the share link again") as refused:
            await credentials.identify(dropped)
        assert str(refused.value) == str(VISITOR_GONE)
    for kept in tokens[2:]:
        identity = await credentials.identify(kept)
        assert identity is not None and identity.application_id == application_id


async def test_visitor_tokens_expire_and_expired_visitors_make_room(sessions: Sessions, unique: str) -> None:
    later = dt.timedelta()  # how far the policy's clock runs ahead of the real one
    policy = VisitorPolicy(token_lifetime=dt.timedelta(seconds=1), visitors_per_link=2, clock=lambda: utcnow() + later)
    credentials = Credentials(sessions, policy)
    application_id, token = await share_link(sessions, credentials, f"expiring-{unique}")
    _, first = await credentials.new_visitor(token)
    assert await credentials.identify(first) is not None
    later = dt.timedelta(seconds=1.1)
    with pytest.raises(Unauthenticated) as refused:
        await credentials.identify(first)
    assert str(refused.value) == str(VISITOR_EXPIRED)
    await credentials.new_visitor(token)
    assert await live_visitors(sessions, application_id) == 1, "the expired visitor was dropped at the next sign-in"


async def test_kb_visitor_token_days_sets_how_long_a_visitor_token_works(sessions: Sessions, unique: str) -> None:
    """The lifetime comes from KB_VISITOR_TOKEN_DAYS: a token signed in 13 hours ago still works
    under the 7-day default and is refused under half a day."""
    policy = VisitorPolicy.from_settings(Settings.from_env({"KB_VISITOR_TOKEN_DAYS": "0.5"}))
    assert policy.token_lifetime == dt.timedelta(hours=12)
    for credentials, works in ((Credentials(sessions), True), (Credentials(sessions, policy), False)):
        _, token = await share_link(sessions, credentials, f"lifetime-{works}-{unique}")
        visitor, visitor_token = await credentials.new_visitor(token)
        async with sessions.begin() as session:
            thirteen_hours_ago = utcnow() - dt.timedelta(hours=13)
            await session.execute(update(Visitor).where(Visitor.id == visitor.id).values(created_at=thirteen_hours_ago))
        if works:
            assert await credentials.identify(visitor_token) is not None
        else:
            with pytest.raises(Unauthenticated, match="open the share link again"):
                await credentials.identify(visitor_token)
