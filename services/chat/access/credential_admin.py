"""What the operator does with the credentials it handed out: list them (API keys
masked), revoke and re-activate them, give them an expiry, rotate their secrets; and the use
counts that tell which of them are still used.

A change takes effect on the credential's next call, because every call resolves its token
afresh (``Credentials.identify``): nothing is cached that a revocation would have to reach. An
answer already streaming when its key is revoked finishes: the key was valid when the question
was admitted, and the record it saves is what the operator reads to see what the key did.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

from sqlalchemy import Update, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import AccessToken, ApiKey, Visitor, utcnow
from kbcore.errors import Conflict, InvalidRequest, NotFound
from kbcore.words.said import said
from services.chat.access.credential_audit import change_words, record_key, record_link, state_of
from services.chat.access.credentials import MAX_ACCESS_NUM, MAX_DAILY_CAP, new_api_key
from services.chat.access.framing_sites import stored_sites
from services.chat.access.visitors import ShareLinkVisitors
from services.chat.callers.chat_caller import Caller, CallerKind

MASK = "…"


def masked(prefix: str) -> str:
    """What a list shows of a key: enough to tell keys apart, never enough to use one."""
    return prefix + MASK


def counted_use(caller: Caller) -> Update | None:
    """The one statement that counts a question against the credential that asked it (an API
    key, or the share link of a visitor), run in the transaction that records the question; None
    for the operator, whose token is not a handed-out credential."""
    now = utcnow()
    if caller.kind is CallerKind.APPLICATION and caller.key_id:
        return update(ApiKey).where(ApiKey.id == caller.key_id).values(use_count=ApiKey.use_count + 1, last_used_at=now)
    if caller.kind is CallerKind.VISITOR:
        link = AccessToken.application_id == caller.application_id
        return update(AccessToken).where(link).values(use_count=AccessToken.use_count + 1, last_used_at=now)
    return None


@dataclass(frozen=True)
class KeyChange:
    is_active: bool | None = None
    expires_at: dt.datetime | None = None
    set_expiry: bool = False  # whether ``expires_at`` (None: never) was given

    def only_activity(self) -> bool:
        """Whether switching on or off is all the change asks."""
        return not self.set_expiry


@dataclass(frozen=True)
class LinkChange(KeyChange):
    access_num: int | None = None
    daily_cap: int | None = None
    reset: bool = False  # a new link token as well (MaxKB's ``access_token_reset``)
    sites_limited: bool | None = None  # only ``allowed_sites`` may frame the link's page
    allowed_sites: tuple[str, ...] | None = None  # checked by ``framing_sites``

    def only_activity(self) -> bool:
        unchanged = self.access_num is None and self.daily_cap is None and not self.reset
        return super().only_activity() and unchanged and self.sites_limited is None and self.allowed_sites is None

    def __post_init__(self) -> None:
        if self.access_num is not None and not 1 <= self.access_num <= MAX_ACCESS_NUM:
            raise InvalidRequest(
                said("access_num_must_be_between_1", max_access_num=MAX_ACCESS_NUM, access_num=self.access_num)
            )
        if self.daily_cap is not None and not 1 <= self.daily_cap <= MAX_DAILY_CAP:
            raise InvalidRequest(
                said("daily_cap_must_be_between_1", max_daily_cap=MAX_DAILY_CAP, daily_cap=self.daily_cap)
            )


class CredentialAdmin:
    """Listing and changing an application's API keys and share link."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def list_keys(self, application_id: str) -> list[ApiKey]:
        async with self._sessions() as session:
            rows = await session.scalars(
                select(ApiKey).where(ApiKey.application_id == application_id).order_by(ApiKey.created_at, ApiKey.id)
            )
            return list(rows.all())

    async def update_key(self, application_id: str, key_id: str, change: KeyChange) -> ApiKey:
        async with self._sessions.begin() as session:
            row = await _key(session, application_id, key_id)
            before = state_of(row)
            _apply(row, change, KEY_ALREADY)
            record_key(session, "update", row, change_words(before, row))
        return row

    async def rotate_key(self, application_id: str, key_id: str) -> tuple[ApiKey, str]:
        """A new secret for the key (same id, state and counts); the old one fails at once."""
        key, hashed, prefix = new_api_key()
        async with self._sessions.begin() as session:
            row = await _key(session, application_id, key_id)
            row.key_hash, row.prefix = hashed, prefix
            record_key(session, "rotate", row)
        return row, key

    async def list_links(self, application_id: str) -> list[AccessToken]:
        async with self._sessions() as session:
            rows = await session.scalars(select(AccessToken).where(AccessToken.application_id == application_id))
            return list(rows.all())

    async def update_link(
        self, application_id: str, access_token: str, change: LinkChange, verb: str = "update"
    ) -> AccessToken:
        """Everything the change asks, in one transaction with its audit row (``access_token.<verb>``):
        all of it or, refused, none of it (a rotation asked together with a refused change
        rotates nothing).

        With ``reset``, a new link token: the old link fails at once, and so do the visitor
        tokens it issued (dropped in the same transaction). Sign-ins racing this one are ordered
        by the link's row (``ShareLinkVisitors.sign_in`` checks it in its own transaction)."""
        async with self._sessions.begin() as session:
            row = await _link(session, application_id, access_token)
            before = state_of(row)
            _apply(row, change, LINK_ALREADY)
            if change.access_num is not None:
                row.access_num = change.access_num
            if change.daily_cap is not None:
                row.daily_cap = change.daily_cap
            if change.sites_limited is not None:
                row.sites_limited = change.sites_limited
            if change.allowed_sites is not None:
                row.allowed_sites = stored_sites(change.allowed_sites)
            if change.reset:
                row.access_token = secrets.token_hex(8)
                await session.flush()  # the row lock first, then the visitors
                visitors = select(Visitor.id).where(Visitor.application_id == application_id)
                await ShareLinkVisitors.drop(session, visitors)
            await record_link(session, verb, row, change_words(before, row))
        return row

    async def rotate_link(self, application_id: str, access_token: str) -> AccessToken:
        """A new link token and nothing else (``update_link`` with ``reset``)."""
        return await self.update_link(application_id, access_token, LinkChange(reset=True), "rotate")


async def _key(session: AsyncSession, application_id: str, key_id: str) -> ApiKey:
    row = await session.get(ApiKey, key_id) if key_id else None
    if row is None or row.application_id != application_id:  # another application's key: not found
        raise NotFound(
            said("api_key_does_not_exist_application", key_id_64=f"{key_id[:64]!r}", application_id=application_id)
        )
    return row


async def _link(session: AsyncSession, application_id: str, access_token: str) -> AccessToken:
    row = await session.scalar(select(AccessToken).where(AccessToken.application_id == application_id))
    if row is None or (access_token and row.access_token != access_token):
        raise NotFound(
            said(
                "share_link_does_not_exist_application",
                access_token_64=f"{access_token[:64]!r}",
                application_id=application_id,
            )
        )
    return row


@dataclass(frozen=True)
class Already:
    """The refusals of a change that asks for the state a credential already has, one sentence
    per kind and state, so that each language names the kind and state in its own words."""

    active: str
    revoked: str


KEY_ALREADY = Already("api_key_already_active_nothing_was", "api_key_already_revoked_nothing_was")
LINK_ALREADY = Already("share_link_already_active_nothing_was", "share_link_already_revoked_nothing_was")


def _apply(row: ApiKey | AccessToken, change: KeyChange, already: Already) -> None:
    """Activity and expiry, shared by keys and links. A request that only revokes what is
    revoked (or re-activates what is active) is refused and changes nothing: a second revoke is
    usually a mistake (a double click on a stale page) that the operator should hear about.
    Sent with other changes, ``is_active`` is the state wanted, kept as it is when it already
    holds: MaxKB's clients send it with every edit, and a rotation must not fail on it."""
    if change.is_active is not None:
        if change.is_active == row.is_active and change.only_activity():
            raise Conflict(said(already.active if row.is_active else already.revoked))
        row.is_active = change.is_active
    if change.set_expiry:
        row.expires_at = change.expires_at
