"""Share-link visitors: sign-in is anonymous, so it is rate-limited per link and a
link keeps a bounded number of visitors; tokens expire; and a link's questions per day are
capped for all its visitors together, since each fresh visitor token gets a quota of its own.

Both limits live in the database (``services.chat.callers.rate_windows``), so they hold across every
chat-service process and gateway replica. The per-client-address sign-in limit is the
gateway's (``gateway.signin_limit``): only the gateway sees the client's address.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Select, and_, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import AccessToken, Visitor, VisitorDailyUsage, utcnow
from kbcore.errors import NotFound, QuotaExhausted, RateLimited, Unauthenticated
from kbcore.settings import Settings
from kbcore.words.said import said
from services.chat.callers.rate_windows import day_window, minute_window, prune_earlier_windows, take
from services.chat.callers.secret_digest import digest

VISITOR_PREFIX = "visitor-"
DEFAULT_ACCESS_NUM = 100
DEFAULT_DAILY_CAP = 1000


class UnknownAccessToken(NotFound):
    pass


# Said to a visitor (at sign-in, or on any call with a token the link issued) whose link the
# operator switched off or let expire: 401, since the credential itself no longer counts.
SHARE_LINK_OFF = said("share_link_was_switched_off_operator")
SHARE_LINK_EXPIRED = said("share_link_has_expired_ask_whoever")


def has_expired(expires_at: dt.datetime | None) -> bool:
    """Whether a credential with this expiry (None: never) has expired."""
    return expires_at is not None and expires_at <= utcnow()


def refuse_unusable(is_active: bool, expires_at: dt.datetime | None) -> None:
    """Unauthenticated when a share link is switched off or expired."""
    if not is_active:
        raise Unauthenticated(SHARE_LINK_OFF)
    if has_expired(expires_at):
        raise Unauthenticated(SHARE_LINK_EXPIRED)


async def _hold_link(session: AsyncSession, link_id: str, access_token: str) -> None:
    """Lock the link's row and check it still has this token and is usable, inside the sign-in's
    transaction: a rotation or revocation that commits first refuses this sign-in, and one that
    comes later waits for it and then drops the visitor it created."""
    held = await session.execute(
        update(AccessToken)
        .where(AccessToken.id == link_id, AccessToken.access_token == access_token)
        .values(access_token=AccessToken.access_token)
        .returning(AccessToken.is_active, AccessToken.expires_at)
    )
    row = held.first()
    if row is None:
        raise UnknownAccessToken(said("share_link_does_not_exist"))
    refuse_unusable(row.is_active, row.expires_at)


@dataclass(frozen=True)
class VisitorPolicy:
    """How long a visitor token works, how many visitors a link keeps, how fast it admits them."""

    token_lifetime: dt.timedelta = dt.timedelta(days=7)
    visitors_per_link: int = 1000
    signins_per_minute: int = 60
    # What time it is, for token expiry: a test passes its own to age tokens without waiting.
    clock: Callable[[], dt.datetime] = utcnow

    @classmethod
    def from_settings(cls, settings: Settings) -> VisitorPolicy:
        return cls(
            dt.timedelta(days=settings.visitor_token_days), settings.visitors_per_link, settings.signins_per_link
        )

    def expired(self, visitor: Visitor) -> bool:
        return visitor.created_at < self.clock() - self.token_lifetime


class ShareLinkVisitors:
    """Sign-in through a share link, and the daily questions of its visitors."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], policy: VisitorPolicy) -> None:
        self._sessions = sessions
        self._policy = policy

    async def sign_in(self, access_token: str) -> tuple[Visitor, str]:
        """A new visitor of the link: RateLimited past the link's sign-ins per minute; at the
        visitor bound the oldest visitors are dropped (their tokens then answer 401)."""
        async with self._sessions() as session:
            link = await session.scalar(select(AccessToken).where(AccessToken.access_token == access_token))
        if link is None:
            raise UnknownAccessToken(said("share_link_does_not_exist"))
        refuse_unusable(link.is_active, link.expires_at)
        key, window = f"sign-in:{link.id}", minute_window()
        await prune_earlier_windows(self._sessions, key, window)
        token = VISITOR_PREFIX + secrets.token_urlsafe(24)
        async with self._sessions.begin() as session:
            # First, so concurrent sign-ins of one link queue on this row and count visitors in turn.
            if not await take(session, key, window, self._policy.signins_per_minute):
                raise RateLimited(said("too_many_sign_ins_through_share"))
            await _hold_link(session, link.id, access_token)
            await self._make_room(session, link.application_id)
            visitor = Visitor(application_id=link.application_id, token_hash=digest(token))
            session.add(visitor)
        return visitor, token

    async def returning(self, access_token: str, visitor_token: str) -> Visitor | None:
        """The live visitor ``visitor_token`` names when it belongs to this share link's
        application (a page loaded again keeps its visitor, and with it its chats); None when it
        names nobody usable, and then the caller signs in a new visitor. The link itself must
        still be usable: a returning visitor of a switched-off link is refused like a new one."""
        if not visitor_token.startswith(VISITOR_PREFIX):
            return None
        async with self._sessions() as session:
            link = await session.scalar(select(AccessToken).where(AccessToken.access_token == access_token))
            visitor = await session.scalar(select(Visitor).where(Visitor.token_hash == digest(visitor_token)))
        if link is None:
            raise UnknownAccessToken(said("share_link_does_not_exist"))
        refuse_unusable(link.is_active, link.expires_at)
        if visitor is None or visitor.application_id != link.application_id or self._policy.expired(visitor):
            return None
        return visitor

    async def _make_room(self, session: AsyncSession, application_id: str) -> None:
        """Drop the link's expired visitors, then its oldest ones until a new one fits the bound."""
        cutoff = self._policy.clock() - self._policy.token_lifetime
        of_link = Visitor.application_id == application_id
        await self.drop(session, select(Visitor.id).where(and_(of_link, Visitor.created_at < cutoff)))
        live = await session.scalar(select(func.count()).select_from(Visitor).where(of_link))
        excess = int(live or 0) - self._policy.visitors_per_link + 1
        if excess > 0:
            oldest = select(Visitor.id).where(of_link).order_by(Visitor.created_at, Visitor.id).limit(excess)
            await self.drop(session, select(Visitor.id).where(Visitor.id.in_(list(await session.scalars(oldest)))))

    @staticmethod
    async def drop(session: AsyncSession, ids: Select[str]) -> None:
        """Forget the visitors ``ids`` selects: their tokens then answer 401 (``VISITOR_GONE``)."""
        # Usage rows first and by hand: SQLite enforces no foreign keys unless asked to.
        await session.execute(delete(VisitorDailyUsage).where(VisitorDailyUsage.visitor_id.in_(ids)))
        await session.execute(delete(Visitor).where(Visitor.id.in_(ids)))

    async def count_question(self, visitor_id: str, application_id: str) -> None:
        """Count one question against the visitor's daily quota (QuotaExhausted past it) and the
        link's daily cap for all its visitors (RateLimited past it), both or neither."""
        day = day_window()
        async with self._sessions() as session:
            link = await session.scalar(select(AccessToken).where(AccessToken.application_id == application_id))
        per_visitor = DEFAULT_ACCESS_NUM if link is None else int(link.access_num)
        await self._open_usage(visitor_id, day)
        link_key = f"questions:{link.id}" if link is not None else ""
        if link is not None:
            await prune_earlier_windows(self._sessions, link_key, day)
        async with self._sessions.begin() as session:
            bumped = await session.execute(
                update(VisitorDailyUsage)
                .where(VisitorDailyUsage.visitor_id == visitor_id, VisitorDailyUsage.day == day)
                .where(VisitorDailyUsage.questions < per_visitor)
                .values(questions=VisitorDailyUsage.questions + 1)
            )
            if not bumped.rowcount:  # type: ignore[attr-defined]
                raise QuotaExhausted(per_visitor)
            if link is not None and not await take(session, link_key, day, int(link.daily_cap)):
                raise RateLimited(  # raised inside the transaction: the visitor's count is undone
                    said("share_link_allows_questions_per_day", link_daily_cap=link.daily_cap)
                )

    async def _open_usage(self, visitor_id: str, day: str) -> None:
        async with self._sessions() as session:
            if await session.get(VisitorDailyUsage, (visitor_id, day)) is not None:
                return
        try:
            async with self._sessions.begin() as session:
                session.add(VisitorDailyUsage(visitor_id=visitor_id, day=day, questions=0))
        except IntegrityError:  # another question of the same visitor opened it first
            pass
