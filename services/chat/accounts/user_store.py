"""Users, their roles and grants in the database: the administrator's user management.

Each change is one transaction that does all a request asks or none of it. A change that ends a
user's credentials ends them in that same transaction (``UserChange.ending``): an administrator's
password reset or role change ends every session and personal token of the person, deactivation
their sessions; the person's own new password ends their other sessions and their personal
tokens, the session that set it goes on. Deletion removes the user's tokens and grants with them.
Every call resolves its token afresh (``user_tokens.UserTokens.resolve``), so each takes effect on
the token's next call, refused with a sentence that says why.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from kbcore.db.tables import UserAccount, UserGrant, UserToken
from kbcore.errors import NotFound
from kbcore.permissions.roles import Role
from kbcore.words.said import said
from services.chat.accounts.account_audit import record_user
from services.chat.accounts.grants import GrantSpec, UserView, specs_of
from services.chat.accounts.last_admin import keep_an_administrator, lock_active_administrators
from services.chat.accounts.refusals import failed_precondition, username_taken
from services.chat.accounts.user_tokens import DEACTIVATED, PASSWORD_CHANGED, PASSWORD_RESET, ROLE_CHANGED, UserTokens
from services.chat.audit_details import detail_of


@dataclass(frozen=True)
class UserChange:
    """What an update asks; None leaves a field as it is."""

    role: Role | None = None
    grants: tuple[GrantSpec, ...] | None = None  # replaces the user's grants
    is_active: bool | None = None
    password_hash: str | None = None  # an administrator's reset: the user's sessions and tokens end

    def removes_administrator(self) -> bool:
        return (self.role is not None and self.role is not Role.ADMIN) or self.is_active is False

    def ending(self, account: UserAccount) -> Ending | None:
        """Which of ``account``'s credentials the change ends, and why (None: none). A reset
        password or a new role is a new footing for everything the person holds: a session or
        personal token made under the old one must not outlive it, so all of them end.
        Deactivation ends the sessions; personal tokens are refused while the account is off and
        work again when it is back on (their owner made them for scripts that should resume)."""
        if self.password_hash is not None:
            return Ending(PASSWORD_RESET, personal=True)
        if self.role is not None and self.role.value != account.role:
            return Ending(ROLE_CHANGED, personal=True)
        if self.is_active is False and account.is_active:
            return Ending(DEACTIVATED, personal=False)
        return None

    def words(self, account: UserAccount, held: tuple[GrantSpec, ...]) -> list[str]:
        """What the change does to ``account`` (holding ``held``), for the audit trail: the
        role's names and "password reset", never the password."""
        words = []
        if self.role is not None and self.role.value != account.role:
            words.append(f"role {account.role} → {self.role.value}")
        if self.is_active is not None and self.is_active != account.is_active:
            words.append("activated" if self.is_active else "deactivated")
        if self.grants is not None and set(self.grants) != set(held):
            words.append("grants")
        if self.password_hash is not None:
            words.append("password reset")
        ending = self.ending(account)
        if ending is not None:
            words.append(ending.words)
        return words


@dataclass(frozen=True)
class Ending:
    """Credentials a change ends: the sessions, and with ``personal`` the personal tokens too."""

    reason: str  # user_tokens' SIGNED_OUT, PASSWORD_RESET …, kept on each token ended
    personal: bool

    @property
    def words(self) -> str:
        return "sessions and personal tokens ended" if self.personal else "sessions ended"


def creation_detail(role: Role, grants: tuple[GrantSpec, ...], password_hash: str) -> str:
    """A new user as the audit trail describes it: role, how many grants, whether a password."""
    return f"role {role.value}, {len(grants)} grant(s), " + ("password set" if password_hash else "no password")


def unknown_user(user_id: str) -> NotFound:
    return NotFound(said("there_no_user_id", user_id_64=f"{user_id[:64]!r}"))


async def grants_of(session: AsyncSession, user_id: str) -> tuple[GrantSpec, ...]:
    return specs_of(await session.scalars(select(UserGrant).where(UserGrant.user_id == user_id)))


def add_grants(session: AsyncSession, user_id: str, grants: Iterable[GrantSpec]) -> None:
    for grant in dict.fromkeys(grants):
        session.add(UserGrant(user_id=user_id, object_kind=grant.kind, object_id=grant.object_id))


class UserStore:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], tokens: UserTokens) -> None:
        self._sessions = sessions
        self._tokens = tokens

    @property
    def sessions(self) -> async_sessionmaker[AsyncSession]:
        return self._sessions

    async def get(self, user_id: str) -> UserView:
        async with self._sessions() as session:
            account = await session.get(UserAccount, user_id) if user_id else None
            if account is None:
                raise unknown_user(user_id)
            return UserView(account, await grants_of(session, account.id))

    async def by_username(self, username: str) -> UserAccount | None:
        async with self._sessions() as session:
            found: UserAccount | None = await session.scalar(
                select(UserAccount).where(UserAccount.username == username)
            )
            return found

    async def listed(self) -> list[UserView]:
        """Every user with their grants, oldest first."""
        async with self._sessions() as session:
            accounts = list(await session.scalars(select(UserAccount).order_by(UserAccount.created_at, UserAccount.id)))
            rows = await session.scalars(select(UserGrant))
            grants: dict[str, list[UserGrant]] = {}
            for row in rows:
                grants.setdefault(row.user_id, []).append(row)
        return [UserView(a, specs_of(grants.get(a.id, []))) for a in accounts]

    async def count(self) -> int:
        async with self._sessions() as session:
            return int(await session.scalar(select(func.count()).select_from(UserAccount)) or 0)

    async def create(self, username: str, password_hash: str, role: Role, grants: Iterable[GrantSpec]) -> UserView:
        """A new user; a conflict (409) when the username is taken (also when taken meanwhile)."""
        try:
            async with self._sessions.begin() as session:
                taken = await session.scalar(select(UserAccount.id).where(UserAccount.username == username))
                if taken is not None:
                    raise username_taken(username)
                account = UserAccount(username=username, password_hash=password_hash, role=role.value)
                session.add(account)
                await session.flush()
                add_grants(session, account.id, grants)
                await session.flush()
                view = UserView(account, await grants_of(session, account.id))
                record_user(session, "create", account, creation_detail(role, view.grants, password_hash))
        except IntegrityError as exc:
            raise username_taken(username) from exc
        return view

    async def update(self, user_id: str, change: UserChange) -> UserView:
        async with self._sessions.begin() as session:
            administrators = await lock_active_administrators(session)
            account = await self._locked(session, user_id)
            ending = change.ending(account)  # before the change: a role change is told by the old role
            # Recorded first: a refusal below rolls it back with everything else.
            record_user(session, "update", account, detail_of(change.words(account, await grants_of(session, user_id))))
            if account.id in administrators and change.removes_administrator():
                keep_an_administrator(administrators, account.id)
            if change.role is not None:
                account.role = change.role.value
            if change.is_active is not None:
                account.is_active = change.is_active
            if change.grants is not None:
                await session.execute(delete(UserGrant).where(UserGrant.user_id == account.id))
                add_grants(session, account.id, change.grants)
            if change.password_hash is not None:
                account.password_hash = change.password_hash
            if ending is not None:
                await self._tokens.end_tokens(session, account.id, ending.reason, personal=ending.personal)
            await session.flush()
            return UserView(account, await grants_of(session, account.id))

    async def delete(self, user_id: str) -> None:
        """Delete the user with their tokens and grants (not the last active administrator)."""
        async with self._sessions.begin() as session:
            administrators = await lock_active_administrators(session)
            account = await self._locked(session, user_id)
            if account.id in administrators:
                keep_an_administrator(administrators, account.id)
            record_user(session, "delete", account)
            await session.execute(delete(UserToken).where(UserToken.user_id == account.id))
            await session.execute(delete(UserGrant).where(UserGrant.user_id == account.id))
            await session.delete(account)

    async def set_password(self, user_id: str, password_hash: str, keep_session: str = "") -> None:
        """The user's own new password: their other sessions and their personal tokens end, the
        session that set it (``keep_session``) goes on. One changes a password because the old
        one may be known to someone else, who could have signed in or made a personal token with
        it: neither may outlive it. The person, who has just proved the current password, keeps
        working where they are and makes new personal tokens for their scripts."""
        async with self._sessions.begin() as session:
            account = await self._locked(session, user_id)
            account.password_hash = password_hash
            await self._tokens.end_tokens(session, account.id, PASSWORD_CHANGED, personal=True, keep=keep_session)
            record_user(session, "change_password", account, "other sessions and personal tokens ended")

    async def rehash(self, user_id: str, old_hash: str, new_hash: str) -> None:
        """Store a stronger hash of the same password, unless the password changed meanwhile."""
        async with self._sessions.begin() as session:
            account = await session.get(UserAccount, user_id)
            if account is not None and account.password_hash == old_hash:
                account.password_hash = new_hash

    async def sign_in_link(self, user_id: str) -> tuple[str, dt.datetime]:
        """A one-time sign-in code for an active user, and when it expires."""
        async with self._sessions.begin() as session:
            account = await self._locked(session, user_id)
            if not account.is_active:
                raise failed_precondition(said("account_deactivated_activate_before_sending_sign"))
            return await self._tokens.new_link(session, account)

    @staticmethod
    async def _locked(session: AsyncSession, user_id: str) -> UserAccount:
        account: UserAccount | None = (
            await session.scalar(select(UserAccount).where(UserAccount.id == user_id).with_for_update())
            if user_id
            else None
        )
        if account is None:
            raise unknown_user(user_id)
        return account
