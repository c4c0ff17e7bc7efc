"""API keys, share links and who a token names. Secrets are random, shown once, and stored
only as SHA-256, so a database leak does not hand out working keys. Visitors themselves (sign-in,
expiry, quotas) are ``services.chat.access.visitors``."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import AccessToken, ApiKey, Visitor
from kbcore.errors import Unauthenticated
from kbcore.words.said import said
from services.chat.access.credential_audit import change_words, record_key, record_link, state_of
from services.chat.access.visitors import (
    DEFAULT_ACCESS_NUM,
    DEFAULT_DAILY_CAP,
    VISITOR_PREFIX,
    ShareLinkVisitors,
    UnknownAccessToken,
    VisitorPolicy,
    has_expired,
    refuse_unusable,
)
from services.chat.callers.secret_digest import digest

__all__ = ["DEFAULT_ACCESS_NUM", "DEFAULT_DAILY_CAP", "MAX_ACCESS_NUM", "MAX_DAILY_CAP", "UnknownAccessToken"]

API_KEY_PREFIX = "application-"
MAX_ACCESS_NUM = 100_000
MAX_DAILY_CAP = 10_000_000
VISITOR_EXPIRED = said("visitor_token_has_expired_open_share")
VISITOR_GONE = said("visitor_token_no_longer_valid_expired")
API_KEY_REVOKED = said("api_key_was_revoked_ask_application")
API_KEY_EXPIRED = said("api_key_has_expired_ask_application")


@dataclass(frozen=True)
class Identity:
    kind: str  # "application" | "visitor"
    application_id: str
    visitor_id: str = ""
    key_id: str = ""  # the API key's id, for an application caller (votes are one per key)


class Credentials:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], policy: VisitorPolicy | None = None) -> None:
        self._sessions = sessions
        self._policy = policy or VisitorPolicy()
        self.visitors = ShareLinkVisitors(sessions, self._policy)

    async def create_api_key(self, application_id: str) -> tuple[str, str]:
        key, hashed, prefix = new_api_key()
        async with self._sessions.begin() as session:
            row = ApiKey(application_id=application_id, key_hash=hashed, prefix=prefix)
            session.add(row)
            await session.flush()
            record_key(session, "create", row)
        return row.id, key

    async def set_access_token(
        self, application_id: str, access_num: int, daily_cap: int = DEFAULT_DAILY_CAP
    ) -> AccessToken:
        """The application's share link, created on first use; later calls change its quotas
        only: switching a link off or on is ``UpdateAccessToken``'s, so asking for the link again
        never re-opens one the operator switched off."""
        async with self._sessions.begin() as session:
            row = await session.scalar(select(AccessToken).where(AccessToken.application_id == application_id))
            before = state_of(row) if row is not None else None
            if row is None:
                row = AccessToken(application_id=application_id, access_token=secrets.token_hex(8))
                session.add(row)
            row.access_num = access_num
            row.daily_cap = daily_cap
            if before is None:
                await record_link(session, "create", row)
            else:
                await record_link(session, "update", row, change_words(before, row))
        return row

    async def new_visitor(self, access_token: str, visitor_token: str = "") -> tuple[Visitor, str]:
        """The share link's visitor: the one ``visitor_token`` names when it is still a live
        visitor of the link's application, else a new one."""
        kept = await self.visitors.returning(access_token, visitor_token) if visitor_token else None
        if kept is not None:
            return kept, visitor_token
        return await self.visitors.sign_in(access_token)

    async def link_by_token(self, access_token: str) -> AccessToken | None:
        """The share link ``access_token`` names, active or not; None when none does."""
        if not access_token:
            return None
        async with self._sessions() as session:
            link: AccessToken | None = await session.scalar(
                select(AccessToken).where(AccessToken.access_token == access_token)
            )
            return link

    async def count_question(self, visitor_id: str, application_id: str) -> None:
        await self.visitors.count_question(visitor_id, application_id)

    async def identify(self, token: str) -> Identity | None:
        """Who ``token`` names; None for nobody. A key or visitor token that was revoked, expired
        or dropped, or whose share link was, is refused here with words that say what to do: every
        call resolves its token afresh, so a change takes effect on the credential's next call."""
        hashed = digest(token)
        if token.startswith(API_KEY_PREFIX):
            return await self._identify_key(hashed)
        async with self._sessions() as session:
            found = (
                await session.execute(
                    select(Visitor, AccessToken)
                    .outerjoin(AccessToken, AccessToken.application_id == Visitor.application_id)
                    .where(Visitor.token_hash == hashed)
                )
            ).first()
        if found is None:
            if token.startswith(VISITOR_PREFIX):
                raise Unauthenticated(VISITOR_GONE)
            return None
        visitor, link = found
        if link is None:  # links are never deleted; an application without one issued no visitors
            raise Unauthenticated(VISITOR_GONE)
        refuse_unusable(link.is_active, link.expires_at)
        if self._policy.expired(visitor):
            raise Unauthenticated(VISITOR_EXPIRED)
        return Identity("visitor", visitor.application_id, visitor.id)

    async def _identify_key(self, hashed: str) -> Identity | None:
        async with self._sessions() as session:
            key = await session.scalar(select(ApiKey).where(ApiKey.key_hash == hashed))
        if key is None:
            return None
        if not key.is_active:
            raise Unauthenticated(API_KEY_REVOKED)
        if has_expired(key.expires_at):
            raise Unauthenticated(API_KEY_EXPIRED)
        return Identity("application", key.application_id, key_id=key.id)


def new_api_key() -> tuple[str, str, str]:
    """A fresh key, the SHA-256 that is stored, and the prefix a list shows."""
    key = API_KEY_PREFIX + secrets.token_hex(16)
    return key, digest(key), key[: len(API_KEY_PREFIX) + 4]
