"""Signing in (a username and password, or a one-time sign-in link) and changing one's password.

An unknown username and a wrong password read the same (``WRONG``) and take the same time
(``passwords.verify_password`` checks a stand-in hash for the unknown one), so sign-in does not
tell which usernames exist. Failed attempts are limited per username from one client address
and per client address (``signin_throttle``) before any password is checked; a one-time link is
not counted, so it signs its holder in whatever guesses were made at their account.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from kbcore.db.audit import current_actor
from kbcore.db.tables import UserAccount
from kbcore.errors import InvalidRequest, Unauthenticated
from kbcore.words.said import said
from services.chat.accounts.account_audit import record_failed_sign_in, record_sign_in
from services.chat.accounts.grants import UserView
from services.chat.accounts.passwords import (
    MAX_PASSWORD,
    checked_password,
    checked_username,
    hash_password,
    verify_password,
)
from services.chat.accounts.signin_throttle import SignInThrottle
from services.chat.accounts.user_store import UserStore, grants_of, unknown_user
from services.chat.accounts.user_tokens import ACCOUNT_OFF, IssuedSession, UserTokens

WRONG = said("wrong_username_password")
# How a sign-in was made, as the audit trail says it.
PASSWORD = "password"
LINK = "sign-in link"
WRONG_CURRENT = said("current_password_not_right_nothing_was")


@dataclass(frozen=True)
class SignedIn:
    user: UserView
    session: IssuedSession


class SignIn:
    def __init__(self, users: UserStore, tokens: UserTokens, throttle: SignInThrottle) -> None:
        self._users = users
        self._tokens = tokens
        self._throttle = throttle

    async def with_password(self, username: str, password: str, client_address: str) -> SignedIn:
        if len(password) > MAX_PASSWORD:  # nobody's password; refused before anything reads it
            raise InvalidRequest(
                said("password_must_be_most_characters_long", max_password=MAX_PASSWORD, len_password=len(password))
            )
        if not password:
            raise InvalidRequest(said("enter_password"))
        name = checked_username(username)
        attempt = await self._throttle.begin(name, client_address)
        account = await self._users.by_username(name)
        verdict = await verify_password(account.password_hash if account else "", password)
        if account is None or not verdict.matches:
            await record_failed_sign_in(
                self._users.sessions, name, account.id if account else "", f"{PASSWORD}: {WRONG}"
            )
            raise Unauthenticated(WRONG)
        await self._throttle.succeeded(attempt)
        if verdict.needs_rehash:
            await self._users.rehash(account.id, account.password_hash, await hash_password(password))
        return await self._recorded(PASSWORD, name, account.id)

    async def with_link(self, code: str) -> SignedIn:
        """Redeem a one-time sign-in code: it is used up in the transaction that starts the session."""
        if not code.strip():
            raise InvalidRequest(said("sign_code_must_not_be_empty"))
        return await self._recorded(LINK, "", "", code.strip())

    async def _recorded(self, method: str, tried: str, user_id: str, code: str = "") -> SignedIn:
        """A session for ``user_id`` (or the user a sign-in link's ``code`` names, used up here),
        in one transaction with the audit row of the sign-in; a refusal (a used link, a
        deactivated account) is recorded as a failed sign-in."""
        try:
            async with self._users.sessions.begin() as session:
                if code:
                    user_id = await self._tokens.consume_link(session, code)
                return await self._start(session, user_id, method)
        except Unauthenticated as refused:
            await record_failed_sign_in(self._users.sessions, tried, user_id, f"{method}: {refused}")
            raise

    async def _start(self, session: AsyncSession, user_id: str, method: str) -> SignedIn:
        account = await session.scalar(select(UserAccount).where(UserAccount.id == user_id).with_for_update())
        if account is None:
            raise unknown_user(user_id)
        if not account.is_active:
            raise Unauthenticated(ACCOUNT_OFF)
        issued = await self._tokens.start_session(session, account)
        await session.flush()
        record_sign_in(session, account, method)
        return SignedIn(UserView(account, await grants_of(session, account.id)), issued)

    async def change_password(self, user_id: str, session_id: str, current: str, new: str) -> None:
        """Set the user's own password. The current one is needed unless the account has none yet
        (signed in by link); a wrong one counts as a failed sign-in from the caller's address. The
        user's other sessions and personal tokens end; ``session_id`` (the session making the
        change, if it is one) stays."""
        checked_password(new, "the new password")
        view = await self._users.get(user_id)
        if view.account.password_hash:
            if len(current) > MAX_PASSWORD:
                raise InvalidRequest(WRONG_CURRENT)
            attempt = await self._throttle.begin(view.account.username, current_actor().address)
            if not (await verify_password(view.account.password_hash, current)).matches:
                raise InvalidRequest(WRONG_CURRENT)
            await self._throttle.succeeded(attempt)
        await self._users.set_password(user_id, await hash_password(new), keep_session=session_id)
