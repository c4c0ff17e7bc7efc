"""A user's bearer credentials: sessions (``kbs_…``, from signing in), personal tokens
(``kbp_…``, for scripts and the CLI) and one-time sign-in link codes. Each is random, shown once,
and stored only as its SHA-256 (``user_token``), as API keys are.

Every call resolves its token afresh, so a sign-out, a revocation, a deactivated or deleted
account takes effect on the token's very next call. A token that ended keeps why (``ended_by``):
its next use is refused with a sentence that says so (``ended``), not just "revoked". A session slides: each use moves its expiry
``KB_SESSION_HOURS`` on (written at most once a minute, so a busy page does not write on every
call), never beyond 30 days after it began.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import UserAccount, UserGrant, UserToken, utcnow
from kbcore.errors import Unauthenticated
from kbcore.settings import Settings
from kbcore.words.said import said
from services.chat.accounts.account_audit import record_user
from services.chat.accounts.grants import GrantSpec, specs_of
from services.chat.callers.secret_digest import digest

SESSION_PREFIX = "kbs_"
PERSONAL_PREFIX = "kbp_"
SESSION, PERSONAL, SIGNIN_LINK = "session", "personal", "signin_link"
KIND_OF_PREFIX = {SESSION_PREFIX: SESSION, PERSONAL_PREFIX: PERSONAL}
MAX_SESSION_AGE = dt.timedelta(days=30)
SLIDE_EVERY = dt.timedelta(minutes=1)
SHOWN_PREFIX = 12  # what a list shows of a personal token: "kbp_" and 8 hex digits

# Why a token ended (``UserToken.ended_by``); "" for one that ended before the reason was kept.
SIGNED_OUT = "signed_out"
REVOKED = "revoked"  # a personal token its owner revoked
PASSWORD_CHANGED = "password_changed"  # the person's own new password
PASSWORD_RESET = "password_reset"  # an administrator's reset
ROLE_CHANGED = "role_changed"
DEACTIVATED = "deactivated"

UNKNOWN_TOKEN = said("unknown_revoked_token")
SESSION_ENDED = said("session_has_ended_signed_out_password")
SESSION_SIGNED_OUT = said("session_has_ended_was_signed_out")
SESSION_PASSWORD_CHANGED = said("session_has_ended_because_account_password")
SESSION_PASSWORD_RESET = said("session_has_ended_because_administrator_reset")
SESSION_ROLE_CHANGED = said("session_has_ended_because_administrator_changed")
SESSION_DEACTIVATED = said("session_has_ended_because_account_was")
SESSION_EXPIRED = said("session_has_expired_sign_again")
PERSONAL_REVOKED = said("personal_token_was_revoked_create_new")
PERSONAL_PASSWORD_CHANGED = said("personal_token_was_revoked_because_account")
PERSONAL_PASSWORD_RESET = said("personal_token_was_revoked_because_administrator")
PERSONAL_ROLE_CHANGED = said("personal_token_was_revoked_because_administrator_2")
PERSONAL_EXPIRED = said("personal_token_has_expired_create_new")
ACCOUNT_OFF = said("account_deactivated_ask_administrator_activate_again")
LINK_UNUSABLE = said("sign_link_unknown_was_used_already")


def is_user_token(token: str) -> bool:
    """Whether ``token`` has the shape of a session or personal token."""
    return token.startswith((SESSION_PREFIX, PERSONAL_PREFIX))


@dataclass(frozen=True)
class TokenHolder:
    """Who a session or personal token names, resolved for one call."""

    token_id: str
    token_kind: str  # SESSION or PERSONAL
    account: UserAccount
    grants: tuple[GrantSpec, ...]


@dataclass(frozen=True)
class IssuedSession:
    token: str
    expires_at: dt.datetime


def new_secret(prefix: str) -> str:
    return prefix + secrets.token_hex(24)


def ended(kind: str, reason: str) -> Unauthenticated:
    """The refusal of a session or personal token that ``reason`` ended: why, and what to do now."""
    session = kind == SESSION
    if reason == PASSWORD_RESET:
        return Unauthenticated(SESSION_PASSWORD_RESET if session else PERSONAL_PASSWORD_RESET)
    if reason == ROLE_CHANGED:
        return Unauthenticated(SESSION_ROLE_CHANGED if session else PERSONAL_ROLE_CHANGED)
    if reason == PASSWORD_CHANGED:
        return Unauthenticated(SESSION_PASSWORD_CHANGED if session else PERSONAL_PASSWORD_CHANGED)
    if reason == DEACTIVATED and session:
        return Unauthenticated(SESSION_DEACTIVATED)
    if reason == SIGNED_OUT and session:
        return Unauthenticated(SESSION_SIGNED_OUT)
    return Unauthenticated(SESSION_ENDED if session else PERSONAL_REVOKED)


class UserTokens:
    """Issuing, resolving and ending a user's tokens."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self._sessions = sessions
        self._session_lifetime = dt.timedelta(hours=settings.session_hours)
        self.link_lifetime = dt.timedelta(minutes=settings.signin_link_minutes)
        self._clock = clock

    # --- resolving --------------------------------------------------------------------------

    async def resolve(self, token: str) -> TokenHolder:
        """The user a session or personal token names; Unauthenticated, in words, otherwise."""
        kind = KIND_OF_PREFIX[token[:4]]
        async with self._sessions() as session:
            found = (
                await session.execute(
                    select(UserToken, UserAccount)
                    .join(UserAccount, UserAccount.id == UserToken.user_id)
                    .where(UserToken.token_hash == digest(token), UserToken.kind == kind)
                )
            ).first()
            if found is None:
                raise Unauthenticated(UNKNOWN_TOKEN)
            row, account = found
            self._refuse_unusable(row, account)
            grants = specs_of(await session.scalars(select(UserGrant).where(UserGrant.user_id == account.id)))
        await self._touch(row)
        return TokenHolder(row.id, row.kind, account, grants)

    def _refuse_unusable(self, row: UserToken, account: UserAccount) -> None:
        session = row.kind == SESSION
        if row.revoked_at is not None:
            raise ended(row.kind, row.ended_by)
        if row.expires_at is not None and row.expires_at <= self._clock():
            raise Unauthenticated(SESSION_EXPIRED if session else PERSONAL_EXPIRED)
        if not account.is_active:
            raise Unauthenticated(ACCOUNT_OFF)

    async def _touch(self, row: UserToken) -> None:
        """Record the use, and slide a session's expiry, at most once a minute per token."""
        now = self._clock()
        if row.last_used_at is not None and row.last_used_at > now - SLIDE_EVERY:
            return
        values: dict[str, dt.datetime] = {"last_used_at": now}
        if row.kind == SESSION:
            values["expires_at"] = self.session_expiry(row.created_at, now)
        stale = or_(UserToken.last_used_at.is_(None), UserToken.last_used_at <= now - SLIDE_EVERY)
        async with self._sessions.begin() as session:
            await session.execute(
                update(UserToken).where(UserToken.id == row.id, UserToken.revoked_at.is_(None), stale).values(**values)
            )

    def session_expiry(self, created_at: dt.datetime, now: dt.datetime) -> dt.datetime:
        return min(now + self._session_lifetime, created_at + MAX_SESSION_AGE)

    # --- sessions ---------------------------------------------------------------------------

    async def start_session(self, session: AsyncSession, account: UserAccount) -> IssuedSession:
        """A new session for ``account``, in the caller's transaction (which also records the
        sign-in): the session exists only if the sign-in that made it commits."""
        now = self._clock()
        token = new_secret(SESSION_PREFIX)
        expires_at = self.session_expiry(now, now)
        session.add(
            UserToken(
                user_id=account.id,
                kind=SESSION,
                token_hash=digest(token),
                prefix=token[:SHOWN_PREFIX],
                created_at=now,
                expires_at=expires_at,
                last_used_at=now,
            )
        )
        account.last_sign_in_at = now
        return IssuedSession(token, expires_at)

    async def end_tokens(
        self, session: AsyncSession, user_id: str, reason: str, *, personal: bool = False, keep: str = ""
    ) -> None:
        """End every live session of ``user_id`` (and, with ``personal``, every personal token)
        but ``keep`` (a token id), for ``reason``, in the caller's transaction."""
        kinds = (SESSION, PERSONAL) if personal else (SESSION,)
        condition = [UserToken.user_id == user_id, UserToken.kind.in_(kinds), UserToken.revoked_at.is_(None)]
        if keep:
            condition.append(UserToken.id != keep)
        await session.execute(update(UserToken).where(*condition).values(revoked_at=self._clock(), ended_by=reason))

    async def end_session(self, token_id: str) -> None:
        async with self._sessions.begin() as session:
            await session.execute(
                update(UserToken)
                .where(UserToken.id == token_id, UserToken.revoked_at.is_(None))
                .values(revoked_at=self._clock(), ended_by=SIGNED_OUT)
            )

    # --- one-time sign-in links -------------------------------------------------------------

    async def new_link(self, session: AsyncSession, account: UserAccount, how: str = "") -> tuple[str, dt.datetime]:
        """A one-time sign-in code for ``account`` (flushed: it has its id), with its audit row
        (``user.create_sign_in_link``, ``how`` as its detail), in the caller's transaction. A link
        signs its holder in as the account, so every one issued is on the trail, whoever issued
        it: an administrator on the operator page, the launcher, ``tools.signin_link``."""
        code = secrets.token_urlsafe(24)
        now = self._clock()
        expires_at = now + self.link_lifetime
        session.add(
            UserToken(
                user_id=account.id, kind=SIGNIN_LINK, token_hash=digest(code), created_at=now, expires_at=expires_at
            )
        )
        record_user(session, "create_sign_in_link", account, how)
        return code, expires_at

    async def consume_link(self, session: AsyncSession, code: str) -> str:
        """Use up the sign-in link ``code`` names, in the caller's transaction; the id of its user.
        One conditional update: of two redemptions at once, one finds it unused, the other not."""
        now = self._clock()
        used = await session.execute(
            update(UserToken)
            .where(
                UserToken.token_hash == digest(code),
                UserToken.kind == SIGNIN_LINK,
                UserToken.revoked_at.is_(None),
                UserToken.expires_at > now,
            )
            .values(revoked_at=now, last_used_at=now)
            .returning(UserToken.user_id)
        )
        user_id = used.scalar()
        if user_id is None:
            raise Unauthenticated(LINK_UNUSABLE)
        return str(user_id)
