"""API keys, share links, visitors and their daily quota. Secrets are random, shown once,
and stored only as SHA-256, so a database leak does not hand out working keys."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.models import AccessToken, ApiKey, Visitor, VisitorDailyUsage
from kbcore.errors import NotFound, QuotaExhausted

API_KEY_PREFIX = "application-"
VISITOR_PREFIX = "visitor-"
DEFAULT_ACCESS_NUM = 100
MAX_ACCESS_NUM = 100_000


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class Identity:
    kind: str  # "application" | "visitor"
    application_id: str
    visitor_id: str = ""


class UnknownAccessToken(NotFound):
    pass


class Credentials:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def create_api_key(self, application_id: str) -> tuple[str, str]:
        key = API_KEY_PREFIX + secrets.token_hex(16)
        async with self._sessions.begin() as session:
            row = ApiKey(application_id=application_id, key_hash=digest(key), prefix=key[: len(API_KEY_PREFIX) + 4])
            session.add(row)
        return row.id, key

    async def set_access_token(self, application_id: str, access_num: int) -> AccessToken:
        """The application's share link, created on first use; later calls change its quota."""
        async with self._sessions.begin() as session:
            row = await session.scalar(select(AccessToken).where(AccessToken.application_id == application_id))
            if row is None:
                row = AccessToken(application_id=application_id, access_token=secrets.token_hex(8))
                session.add(row)
            row.access_num = access_num
            row.is_active = True
        return row

    async def new_visitor(self, access_token: str) -> tuple[Visitor, str]:
        async with self._sessions.begin() as session:
            link = await session.scalar(
                select(AccessToken).where(AccessToken.access_token == access_token, AccessToken.is_active.is_(True))
            )
            if link is None:
                raise UnknownAccessToken("this share link does not exist or was switched off")
            token = VISITOR_PREFIX + secrets.token_urlsafe(24)
            visitor = Visitor(application_id=link.application_id, token_hash=digest(token))
            session.add(visitor)
        return visitor, token

    async def identify(self, token: str) -> Identity | None:
        hashed = digest(token)
        async with self._sessions() as session:
            if token.startswith(API_KEY_PREFIX):
                application_id = await session.scalar(
                    select(ApiKey.application_id).where(ApiKey.key_hash == hashed, ApiKey.is_active.is_(True))
                )
                return Identity("application", application_id) if application_id else None
            visitor = await session.scalar(select(Visitor).where(Visitor.token_hash == hashed))
            return Identity("visitor", visitor.application_id, visitor.id) if visitor else None

    async def count_question(self, visitor_id: str, application_id: str) -> None:
        """Count one question against the visitor's daily quota; QuotaExhausted past it."""
        day = dt.datetime.now(dt.UTC).date().isoformat()
        async with self._sessions.begin() as session:
            limit = await session.scalar(
                select(AccessToken.access_num).where(AccessToken.application_id == application_id)
            )
            limit = DEFAULT_ACCESS_NUM if limit is None else int(limit)
            bumped = await session.execute(
                update(VisitorDailyUsage)
                .where(VisitorDailyUsage.visitor_id == visitor_id, VisitorDailyUsage.day == day)
                .where(VisitorDailyUsage.questions < limit)
                .values(questions=VisitorDailyUsage.questions + 1)
            )
            if bumped.rowcount:  # type: ignore[attr-defined]
                return
            exists = await session.get(VisitorDailyUsage, (visitor_id, day))
            if exists is not None or limit < 1:
                raise QuotaExhausted(limit)
        try:
            async with self._sessions.begin() as session:
                session.add(VisitorDailyUsage(visitor_id=visitor_id, day=day, questions=1))
        except IntegrityError:  # another question of the same visitor created the row first
            await self.count_question(visitor_id, application_id)
