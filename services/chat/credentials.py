"""API keys, share links and who a token names. Secrets are random, shown once, and stored
only as SHA-256, so a database leak does not hand out working keys. Visitors themselves (sign-in,
expiry, quotas) are ``services.chat.visitors``."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.models import AccessToken, ApiKey, Visitor
from kbcore.errors import Unauthenticated
from services.chat.visitors import (
    DEFAULT_ACCESS_NUM,
    DEFAULT_DAILY_CAP,
    VISITOR_PREFIX,
    ShareLinkVisitors,
    UnknownAccessToken,
    VisitorPolicy,
    digest,
)

__all__ = ["DEFAULT_ACCESS_NUM", "DEFAULT_DAILY_CAP", "MAX_ACCESS_NUM", "MAX_DAILY_CAP", "UnknownAccessToken"]

API_KEY_PREFIX = "application-"
MAX_ACCESS_NUM = 100_000
MAX_DAILY_CAP = 10_000_000
VISITOR_EXPIRED = "this visitor token has expired; open the share link again"
VISITOR_GONE = (
    "this visitor token is no longer valid (expired, or replaced by newer visitors); open the share link again"
)


@dataclass(frozen=True)
class Identity:
    kind: str  # "application" | "visitor"
    application_id: str
    visitor_id: str = ""


class Credentials:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], policy: VisitorPolicy | None = None) -> None:
        self._sessions = sessions
        self._policy = policy or VisitorPolicy()
        self.visitors = ShareLinkVisitors(sessions, self._policy)

    async def create_api_key(self, application_id: str) -> tuple[str, str]:
        key = API_KEY_PREFIX + secrets.token_hex(16)
        async with self._sessions.begin() as session:
            row = ApiKey(application_id=application_id, key_hash=digest(key), prefix=key[: len(API_KEY_PREFIX) + 4])
            session.add(row)
        return row.id, key

    async def set_access_token(
        self, application_id: str, access_num: int, daily_cap: int = DEFAULT_DAILY_CAP
    ) -> AccessToken:
        """The application's share link, created on first use; later calls change its quotas."""
        async with self._sessions.begin() as session:
            row = await session.scalar(select(AccessToken).where(AccessToken.application_id == application_id))
            if row is None:
                row = AccessToken(application_id=application_id, access_token=secrets.token_hex(8))
                session.add(row)
            row.access_num = access_num
            row.daily_cap = daily_cap
            row.is_active = True
        return row

    async def new_visitor(self, access_token: str) -> tuple[Visitor, str]:
        return await self.visitors.sign_in(access_token)

    async def count_question(self, visitor_id: str, application_id: str) -> None:
        await self.visitors.count_question(visitor_id, application_id)

    async def identify(self, token: str) -> Identity | None:
        """Who ``token`` names; None for nobody. A visitor token that expired or was dropped is
        refused here with words that tell the visitor what to do."""
        hashed = digest(token)
        async with self._sessions() as session:
            if token.startswith(API_KEY_PREFIX):
                application_id = await session.scalar(
                    select(ApiKey.application_id).where(ApiKey.key_hash == hashed, ApiKey.is_active.is_(True))
                )
                return Identity("application", application_id) if application_id else None
            visitor = await session.scalar(select(Visitor).where(Visitor.token_hash == hashed))
        if visitor is None:
            if token.startswith(VISITOR_PREFIX):
                raise Unauthenticated(VISITOR_GONE)
            return None
        if self._policy.expired(visitor):
            raise Unauthenticated(VISITOR_EXPIRED)
        return Identity("visitor", visitor.application_id, visitor.id)
