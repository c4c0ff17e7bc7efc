"""Personal tokens: a user's own long-lived bearer tokens for scripts and the CLI, shown once,
listed by their prefix only, revoked by their owner (and with every other credential of the
account when its password changes or an administrator resets it or changes its role:
``user_store``). They act with their owner's role and grants
as they are at each call (resolved by ``user_tokens.UserTokens.resolve``)."""

from __future__ import annotations

import datetime as dt
import unicodedata

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import UserToken, utcnow
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.words.said import said
from services.chat.accounts.account_audit import record_personal_token
from services.chat.accounts.user_tokens import PERSONAL, PERSONAL_PREFIX, REVOKED, SHOWN_PREFIX, new_secret
from services.chat.callers.secret_digest import digest

MAX_NAME = 100  # the width of ``user_token.name``


def checked_name(raw: str) -> str:
    name = raw.strip()
    if len(name) > MAX_NAME:
        raise InvalidRequest(said("personal_token_name_must_be_most", max_name=MAX_NAME, len_name=len(name)))
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise InvalidRequest(said("personal_token_name_must_not_contain"))
    return name


def is_active(row: UserToken, now: dt.datetime | None = None) -> bool:
    return row.revoked_at is None and (row.expires_at is None or row.expires_at > (now or utcnow()))


class PersonalTokens:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def create(self, user_id: str, name: str, expires_at: dt.datetime | None) -> tuple[UserToken, str]:
        """A new token of ``user_id`` (the row, and the token itself, which is never stored)."""
        token = new_secret(PERSONAL_PREFIX)
        row = UserToken(
            user_id=user_id,
            kind=PERSONAL,
            token_hash=digest(token),
            prefix=token[:SHOWN_PREFIX],
            name=checked_name(name),
            created_at=utcnow(),
            expires_at=expires_at,
        )
        async with self._sessions.begin() as session:
            session.add(row)
            await session.flush()
            record_personal_token(session, "create", row)
        return row, token

    async def listed(self, user_id: str) -> list[UserToken]:
        """The user's personal tokens, newest first, revoked and expired ones included (marked so)."""
        async with self._sessions() as session:
            rows = await session.scalars(
                select(UserToken)
                .where(UserToken.user_id == user_id, UserToken.kind == PERSONAL)
                .order_by(UserToken.created_at.desc(), UserToken.id)
            )
            return list(rows.all())

    async def revoke(self, user_id: str, token_id: str) -> None:
        """Revoke one of the user's own tokens; another user's reads as not found."""
        async with self._sessions.begin() as session:
            row = await session.get(UserToken, token_id) if token_id else None
            if row is None or row.user_id != user_id or row.kind != PERSONAL:
                raise NotFound(said("you_have_no_personal_token_id", token_id_64=f"{token_id[:64]!r}"))
            if row.revoked_at is not None:
                raise Conflict(said("personal_token_revoked_already_nothing_was"))
            row.revoked_at = utcnow()
            row.ended_by = REVOKED
            record_personal_token(session, "revoke", row)
