"""User accounts over gRPC, on real chat servers: signing in with a password (argon2id, the
same words for an unknown user and a wrong password, failures throttled per username from one
address and per address, never per username alone), one-time sign-in links, sign-out, password
changes ending the other sessions and the personal tokens, an administrator's reset or role
change ending every session and personal token (each refused with a sentence that says why),
deactivated and deleted users, the last administrator, and refusals of bad input in sentences
with nothing created.

The tests that depend on which users exist (the first administrator, the last one) run on a
chat server of their own over a fresh database (a SQLite file, or a new PostgreSQL database
when the suite runs on PostgreSQL)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from argon2 import PasswordHasher
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

import services.chat.accounts.signin_throttle as throttle_module
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as chat_grpc
from kbcore.db.engine import create_engine as create_async_db_engine
from kbcore.db.engine import session_factory
from kbcore.db.tables import UserAccount, UserToken, utcnow
from kbcore.errors import Unauthenticated
from kbcore.refusals.reasons import retry_after_in
from kbcore.rpc.caller_token import bearer
from kbcore.rpc.stubs import ChatStubs
from kbcore.settings import Settings
from kbcore.words.messages import MESSAGES
from services.chat.accounts.first_admin import ensure_first_admin
from services.chat.accounts.refusals import LAST_ADMINISTRATOR
from services.chat.accounts.signin import WRONG, WRONG_CURRENT
from services.chat.accounts.signin_throttle import TOO_MANY_FOR_ACCOUNT, TOO_MANY_FROM_ADDRESS
from services.chat.accounts.user_rpcs import NO_ACCOUNT
from services.chat.accounts.user_tokens import (
    ACCOUNT_OFF,
    LINK_UNUSABLE,
    MAX_SESSION_AGE,
    PERSONAL_PASSWORD_CHANGED,
    PERSONAL_PASSWORD_RESET,
    PERSONAL_REVOKED,
    PERSONAL_ROLE_CHANGED,
    SESSION_DEACTIVATED,
    SESSION_EXPIRED,
    SESSION_PASSWORD_CHANGED,
    SESSION_PASSWORD_RESET,
    SESSION_ROLE_CHANGED,
    SESSION_SIGNED_OUT,
    UNKNOWN_TOKEN,
    UserTokens,
)
from tests.fresh_chat import FreshChat, fresh_chat_server
from tests.grpc_status import status_of
from tests.harness import Stack

Metadata = tuple[tuple[str, str], ...]
Sessions = async_sessionmaker[AsyncSession]
PASSWORD = "correct horse battery"


async def new_user(
    users: chat_grpc.UserServiceStub, admin: Metadata, name: str, password: str = "", role: pb.Role = pb.ROLE_EDITOR
) -> pb.UserInfo:
    made: pb.UserInfo = await users.CreateUser(
        pb.CreateUserRequest(username=name, password=password, role=role), metadata=admin
    )
    return made


async def session_of(users: chat_grpc.UserServiceStub, admin: Metadata, user_id: str) -> Metadata:
    """A session of the user, through a one-time sign-in link (no password needed)."""
    link = await users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=user_id), metadata=admin)
    signed = await users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=link.code))
    return bearer(signed.token)


async def whoami(chat: ChatStubs, caller: Metadata) -> tuple[grpc.StatusCode, str]:
    try:
        answer = await chat.access.WhoAmI(pb.WhoAmIRequest(), metadata=caller)
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""
    return grpc.StatusCode.OK, answer.user.username


async def stored_user(sessions: Sessions, username: str) -> UserAccount | None:
    async with sessions() as session:
        found: UserAccount | None = await session.scalar(select(UserAccount).where(UserAccount.username == username))
        return found


# --- a chat server over a fresh database --------------------------------------------------------


@pytest.fixture
async def fresh(stack: Stack, tmp_path: Path, database_url: str) -> AsyncIterator[FreshChat]:
    """A chat server of its own over a fresh database, failing sign-ins limited to 3 per username
    from an address and 5 per address."""
    async with fresh_chat_server(stack, tmp_path, database_url, signin_failures=3, signin_address_failures=5) as server:
        yield server


@pytest.fixture
def fixed_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """One 15-minute window for the whole test: a burst that crossed a window's end would count
    in two (fixed windows; tests/services/test_rate_windows.py covers the boundary)."""
    window = f"2026-12-01T0{uuid.uuid4().int % 10}:{uuid.uuid4().int % 4 * 15:02d}"
    monkeypatch.setattr(throttle_module, "quarter_hour_window", lambda: window)
    yield


# --- signing in ---------------------------------------------------------------------------------


async def test_sign_in_works_and_a_wrong_password_or_unknown_user_read_alike(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, sessions: Sessions, unique: str
) -> None:
    name = f"ann-{unique}"
    made = await new_user(users, operator, name, PASSWORD, pb.ROLE_VIEWER)
    assert made.username == name and made.role == pb.ROLE_VIEWER
    signed = await users.SignIn(pb.SignInRequest(username=f"  {name} ", password=PASSWORD))
    assert signed.token.startswith("kbs_") and signed.user.id == made.id and signed.expires_at
    me = await chat.access.WhoAmI(pb.WhoAmIRequest(), metadata=bearer(signed.token))
    assert me.kind == pb.WhoAmIResponse.KIND_USER and me.user.username == name and me.user.last_sign_in_at
    # Stored as argon2id, checked with argon2's own verifier; the token only as its SHA-256.
    account = await stored_user(sessions, name)
    assert account is not None and account.password_hash.startswith("$argon2id$")
    assert PasswordHasher().verify(account.password_hash, PASSWORD)
    async with sessions() as session:
        hashes = set(await session.scalars(select(UserToken.token_hash).where(UserToken.user_id == made.id)))
    assert signed.token not in hashes and len(hashes) == 1
    wrong = await status_of(users.SignIn(pb.SignInRequest(username=name, password=PASSWORD + "!")))
    unknown = await status_of(users.SignIn(pb.SignInRequest(username=f"nobody-{unique}", password=PASSWORD)))
    assert wrong == unknown == (grpc.StatusCode.UNAUTHENTICATED, str(WRONG))


async def test_a_user_without_a_password_cannot_sign_in_with_one(
    users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    name = f"linkonly-{unique}"
    await new_user(users, operator, name)
    for password in ("", "anything-at-all"):
        code, message = await status_of(users.SignIn(pb.SignInRequest(username=name, password=password)))
        assert code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT) and message, message


def refused_for(code: str) -> tuple[str, str]:
    """The parts of a throttle refusal (the message ``code``, in English) around its number of minutes."""
    before, _, after = MESSAGES[code].en.partition("{minutes}")
    return before, after


def is_throttled(outcome: tuple[grpc.StatusCode, str], words_code: str) -> bool:
    code, message = outcome
    before, after = refused_for(words_code)
    return code == grpc.StatusCode.RESOURCE_EXHAUSTED and message.startswith(before) and message.endswith(after)


async def test_failed_sign_ins_are_throttled_per_username_from_an_address_and_per_address(
    fresh: FreshChat, fixed_window: None, unique: str
) -> None:
    """With 3 failures per username from an address and 5 per address (the fresh server's)."""
    users, admin = fresh.users, fresh.operator
    target, other = f"target-{unique}", f"other-{unique}"
    await new_user(users, admin, target, PASSWORD)
    await new_user(users, admin, other, PASSWORD)

    def attempt(name: str, password: str, address: str) -> Any:
        return users.SignIn(pb.SignInRequest(username=name, password=password, client_address=address))

    # A successful sign-in does not count: more of them than the limit all work.
    for _ in range(4):
        await attempt(target, PASSWORD, "10.1.0.1")
    # Three failures from one address: from there even the right password is refused...
    for _ in range(3):
        assert (await status_of(attempt(target, "wrong-password", "10.2.0.1")))[1] == str(WRONG)
    assert is_throttled(await status_of(attempt(target, PASSWORD, "10.2.0.1")), TOO_MANY_FOR_ACCOUNT)
    # ... and from anywhere else the username is not held back, nor another username from there.
    assert (await attempt(target, PASSWORD, "10.3.0.1")).token.startswith("kbs_")
    assert (await attempt(other, PASSWORD, "10.2.0.1")).token.startswith("kbs_")
    # Failures spread over usernames from one address fill the address's own count (5 here).
    for n in range(5):
        assert (await status_of(attempt(f"guess-{n}-{unique}", "wrong-password", "10.4.0.1")))[1] == str(WRONG)
    assert is_throttled(await status_of(attempt(other, PASSWORD, "10.4.0.1")), TOO_MANY_FROM_ADDRESS)
    assert (await attempt(other, PASSWORD, "10.5.0.1")).token.startswith("kbs_"), "another address: its own count"
    # An IPv6 client is one /64: a fresh address in the same block is the same client.
    for n in range(3):
        await status_of(attempt(target, "wrong-password", f"2001:db8:1:2::{n + 1}"))
    assert is_throttled(await status_of(attempt(target, PASSWORD, "2001:db8:1:2::ffff")), TOO_MANY_FOR_ACCOUNT)
    assert (await attempt(target, PASSWORD, "2001:db8:1:3::1")).token.startswith("kbs_")


async def test_a_throttled_sign_in_says_when_to_try_again(fresh: FreshChat, fixed_window: None, unique: str) -> None:
    """The refusal carries the seconds to the window's end in its trailing metadata (the
    gateway's ``Retry-After``), and its sentence the minutes."""
    users = fresh.users
    await new_user(users, fresh.operator, f"waiting-{unique}", PASSWORD)
    attempt = pb.SignInRequest(username=f"waiting-{unique}", password="wrong-password", client_address="10.9.0.1")
    for _ in range(3):
        await status_of(users.SignIn(attempt))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await users.SignIn(attempt)
    wait = retry_after_in(refused.value.trailing_metadata())
    assert wait is not None and 1 <= wait <= 15 * 60
    assert f"try again in {-(-wait // 60)} min" in (refused.value.details() or "")


async def test_a_sign_in_link_works_once_and_then_the_user_sets_a_password(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    made = await new_user(users, operator, f"linked-{unique}")
    link = await users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=made.id), metadata=operator)
    assert link.code and link.expires_at
    signed = await users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=link.code))
    assert signed.user.id == made.id
    again = await status_of(users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=link.code)))
    assert again == (grpc.StatusCode.UNAUTHENTICATED, str(LINK_UNUSABLE))
    # No password yet: none is asked for the first one.
    session = bearer(signed.token)
    await users.ChangePassword(pb.ChangePasswordRequest(new_password=PASSWORD), metadata=session)
    assert (await whoami(chat, session))[0] == grpc.StatusCode.OK, "the session that set it goes on"
    relogged = await users.SignIn(pb.SignInRequest(username=f"linked-{unique}", password=PASSWORD))
    assert relogged.user.id == made.id


async def test_sign_out_ends_the_session(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    made = await new_user(users, operator, f"leaver-{unique}")
    session = await session_of(users, operator, made.id)
    other = await session_of(users, operator, made.id)
    await users.SignOut(pb.SignOutRequest(), metadata=session)
    assert await whoami(chat, session) == (grpc.StatusCode.UNAUTHENTICATED, str(SESSION_SIGNED_OUT))
    assert (await whoami(chat, other))[0] == grpc.StatusCode.OK, "only the presented session ends"


async def test_changing_the_password_ends_the_other_sessions_and_the_personal_tokens(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    name = f"changer-{unique}"
    await new_user(users, operator, name, PASSWORD)
    first = bearer((await users.SignIn(pb.SignInRequest(username=name, password=PASSWORD))).token)
    second = bearer((await users.SignIn(pb.SignInRequest(username=name, password=PASSWORD))).token)
    made = await users.CreatePersonalToken(pb.CreatePersonalTokenRequest(name="script"), metadata=second)
    personal = bearer(made.token)
    wrong = pb.ChangePasswordRequest(current_password="not-the-password", new_password="a new password")
    assert await status_of(users.ChangePassword(wrong, metadata=first)) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        str(WRONG_CURRENT),
    )
    short = pb.ChangePasswordRequest(current_password=PASSWORD, new_password="short")
    code, message = await status_of(users.ChangePassword(short, metadata=first))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "at least 8 characters" in message
    assert (await whoami(chat, second))[0] == grpc.StatusCode.OK, "a refused change ends nothing"
    assert (await whoami(chat, personal))[0] == grpc.StatusCode.OK
    change = pb.ChangePasswordRequest(current_password=PASSWORD, new_password="a new password")
    await users.ChangePassword(change, metadata=first)
    assert (await whoami(chat, first))[0] == grpc.StatusCode.OK, "the session that changed it goes on"
    assert await whoami(chat, second) == (grpc.StatusCode.UNAUTHENTICATED, str(SESSION_PASSWORD_CHANGED))
    assert await whoami(chat, personal) == (grpc.StatusCode.UNAUTHENTICATED, str(PERSONAL_PASSWORD_CHANGED))
    listed = await users.ListPersonalTokens(pb.ListPersonalTokensRequest(), metadata=first)
    assert [(t.id, t.is_active) for t in listed.tokens] == [(made.info.id, False)]
    old = await status_of(users.SignIn(pb.SignInRequest(username=name, password=PASSWORD)))
    assert old == (grpc.StatusCode.UNAUTHENTICATED, str(WRONG))
    await users.SignIn(pb.SignInRequest(username=name, password="a new password"))


async def test_personal_tokens_work_until_revoked_and_are_their_owners_only(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    owner = await session_of(users, operator, (await new_user(users, operator, f"scripter-{unique}")).id)
    stranger = await session_of(users, operator, (await new_user(users, operator, f"stranger-{unique}")).id)
    made = await users.CreatePersonalToken(pb.CreatePersonalTokenRequest(name="nightly export"), metadata=owner)
    assert made.token.startswith("kbp_") and made.token.startswith(made.info.prefix) and made.info.is_active
    assert await whoami(chat, bearer(made.token)) == (grpc.StatusCode.OK, f"scripter-{unique}")
    listed = await users.ListPersonalTokens(pb.ListPersonalTokensRequest(), metadata=owner)
    assert [(t.id, t.name, t.prefix) for t in listed.tokens] == [(made.info.id, "nightly export", made.info.prefix)]
    assert made.token not in str(listed) and len(made.info.prefix) < len(made.token)
    assert not (await users.ListPersonalTokens(pb.ListPersonalTokensRequest(), metadata=stranger)).tokens
    code, _ = await status_of(
        users.RevokePersonalToken(pb.RevokePersonalTokenRequest(token_id=made.info.id), metadata=stranger)
    )
    assert code == grpc.StatusCode.NOT_FOUND and (await whoami(chat, bearer(made.token)))[0] == grpc.StatusCode.OK
    await users.RevokePersonalToken(pb.RevokePersonalTokenRequest(token_id=made.info.id), metadata=owner)
    assert await whoami(chat, bearer(made.token)) == (grpc.StatusCode.UNAUTHENTICATED, str(PERSONAL_REVOKED))
    listed = await users.ListPersonalTokens(pb.ListPersonalTokensRequest(), metadata=owner)
    assert [t.is_active for t in listed.tokens] == [False]


async def test_a_deactivated_or_deleted_users_tokens_stop_at_once(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    made = await new_user(users, operator, f"leaving-{unique}")
    session = await session_of(users, operator, made.id)
    personal = bearer(
        (await users.CreatePersonalToken(pb.CreatePersonalTokenRequest(name="cli"), metadata=session)).token
    )
    off = await users.UpdateUser(pb.UpdateUserRequest(user_id=made.id, is_active=False), metadata=operator)
    assert not off.is_active
    assert await whoami(chat, session) == (grpc.StatusCode.UNAUTHENTICATED, str(SESSION_DEACTIVATED))
    assert await whoami(chat, personal) == (grpc.StatusCode.UNAUTHENTICATED, str(ACCOUNT_OFF))
    code, _ = await status_of(users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=made.id), metadata=operator))
    assert code == grpc.StatusCode.ABORTED
    await users.UpdateUser(pb.UpdateUserRequest(user_id=made.id, is_active=True), metadata=operator)
    assert (await whoami(chat, personal))[0] == grpc.StatusCode.OK, "a personal token outlives a deactivation"
    assert (await whoami(chat, session))[0] == grpc.StatusCode.UNAUTHENTICATED, "sessions ended with it"
    await users.DeleteUser(pb.DeleteUserRequest(user_id=made.id), metadata=operator)
    assert await whoami(chat, personal) == (grpc.StatusCode.UNAUTHENTICATED, str(UNKNOWN_TOKEN))
    listed = await users.ListUsers(pb.ListUsersRequest(), metadata=operator)
    assert made.id not in {u.id for u in listed.users}


async def signed_in_with_token(users: chat_grpc.UserServiceStub, name: str) -> tuple[Metadata, Metadata]:
    """A new session of ``name`` (password ``PASSWORD``) and a personal token made with it."""
    session = bearer((await users.SignIn(pb.SignInRequest(username=name, password=PASSWORD))).token)
    made = await users.CreatePersonalToken(pb.CreatePersonalTokenRequest(name="nightly"), metadata=session)
    return session, bearer(made.token)


async def test_an_administrators_password_reset_ends_the_users_sessions_and_personal_tokens(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    name = f"reset-{unique}"
    made = await new_user(users, operator, name, PASSWORD)
    session, personal = await signed_in_with_token(users, name)
    assert (await whoami(chat, personal))[0] == grpc.StatusCode.OK
    reset = pb.UpdateUserRequest(user_id=made.id, password="reset password")
    await users.UpdateUser(reset, metadata=operator)
    assert await whoami(chat, session) == (grpc.StatusCode.UNAUTHENTICATED, str(SESSION_PASSWORD_RESET))
    assert await whoami(chat, personal) == (grpc.StatusCode.UNAUTHENTICATED, str(PERSONAL_PASSWORD_RESET))
    again = await users.SignIn(pb.SignInRequest(username=name, password="reset password"))
    assert (await whoami(chat, bearer(again.token)))[0] == grpc.StatusCode.OK, "the new password signs in"


async def test_a_role_change_ends_the_users_sessions_and_personal_tokens_and_grants_alone_do_not(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    name = f"promoted-{unique}"
    made = await new_user(users, operator, name, PASSWORD, pb.ROLE_VIEWER)
    session, personal = await signed_in_with_token(users, name)
    regrant = pb.UpdateUserRequest(user_id=made.id, replace_grants=True, role=pb.ROLE_VIEWER)
    await users.UpdateUser(regrant, metadata=operator)  # the same role and new grants: nothing ends
    assert [(await whoami(chat, c))[0] for c in (session, personal)] == [grpc.StatusCode.OK] * 2
    promote = pb.UpdateUserRequest(user_id=made.id, role=pb.ROLE_EDITOR)
    assert (await users.UpdateUser(promote, metadata=operator)).role == pb.ROLE_EDITOR
    assert await whoami(chat, session) == (grpc.StatusCode.UNAUTHENTICATED, str(SESSION_ROLE_CHANGED))
    assert await whoami(chat, personal) == (grpc.StatusCode.UNAUTHENTICATED, str(PERSONAL_ROLE_CHANGED))
    fresh_session = bearer((await users.SignIn(pb.SignInRequest(username=name, password=PASSWORD))).token)
    me = await chat.access.WhoAmI(pb.WhoAmIRequest(), metadata=fresh_session)
    assert me.user.role == pb.ROLE_EDITOR, "signed in again, with the new role"


# --- administrators -------------------------------------------------------------------------------


async def test_the_first_administrator_is_made_once_even_when_two_processes_race(fresh: FreshChat) -> None:
    settings = fresh.settings
    other_engine = create_async_db_engine(settings.database_url)  # a second process's own connections
    try:
        codes = await asyncio.gather(
            ensure_first_admin(fresh.sessions, settings), ensure_first_admin(session_factory(other_engine), settings)
        )
    finally:
        await other_engine.dispose()
    made = [code for code in codes if code is not None]
    assert len(made) == 1, codes
    assert await ensure_first_admin(fresh.sessions, settings) is None, "a deployment with users gets no new one"
    admin = await stored_user(fresh.sessions, "admin")
    assert admin is not None and admin.role == "admin" and admin.password_hash == ""
    signed = await fresh.users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=made[0]))
    assert signed.user.role == pb.ROLE_ADMIN and signed.user.username == "admin"


async def test_the_last_active_administrator_stays_even_under_concurrent_requests(fresh: FreshChat) -> None:
    users = fresh.users
    first = await users.CreateUser(pb.CreateUserRequest(username="first", role=pb.ROLE_ADMIN), metadata=fresh.operator)
    admin = await session_of(users, fresh.operator, first.id)  # an administrator user, not the operator token
    for request in (
        pb.UpdateUserRequest(user_id=first.id, role=pb.ROLE_EDITOR),
        pb.UpdateUserRequest(user_id=first.id, is_active=False),
    ):
        assert await status_of(users.UpdateUser(request, metadata=admin)) == (
            grpc.StatusCode.ABORTED,
            str(LAST_ADMINISTRATOR),
        )
    code, _ = await status_of(users.DeleteUser(pb.DeleteUserRequest(user_id=first.id), metadata=admin))
    assert code == grpc.StatusCode.ABORTED
    # Two administrators, each demoted by a request sent at the same moment: one of them stays.
    second = await users.CreateUser(pb.CreateUserRequest(username="second", role=pb.ROLE_ADMIN), metadata=admin)
    demotions = await asyncio.gather(
        *(
            users.UpdateUser(pb.UpdateUserRequest(user_id=u.id, role=pb.ROLE_VIEWER), metadata=fresh.operator)
            for u in (first, second)
        ),
        return_exceptions=True,
    )
    refused = [r for r in demotions if isinstance(r, grpc.aio.AioRpcError)]
    assert len(refused) == 1 and refused[0].code() == grpc.StatusCode.ABORTED, demotions
    listed = await users.ListUsers(pb.ListUsersRequest(), metadata=fresh.operator)
    assert [u.username for u in listed.users if u.role == pb.ROLE_ADMIN and u.is_active] in (["first"], ["second"])


async def test_only_an_administrator_manages_users(
    users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    editor = await new_user(users, operator, f"notadmin-{unique}")
    session = await session_of(users, operator, editor.id)
    for call in (
        users.ListUsers(pb.ListUsersRequest(), metadata=session),
        users.CreateUser(pb.CreateUserRequest(username=f"x-{unique}", role=pb.ROLE_ADMIN), metadata=session),
        users.UpdateUser(pb.UpdateUserRequest(user_id=editor.id, role=pb.ROLE_ADMIN), metadata=session),
        users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=editor.id), metadata=session),
    ):
        assert await status_of(call) == (grpc.StatusCode.PERMISSION_DENIED, "only an administrator may do this")


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("username", "words"),
    [
        ("bad\x00name", "NUL"),
        ("x" * 10_000, "at most 64 characters"),
        ("    ", "empty or only spaces"),
        ("", "empty or only spaces"),
        ("line\nbreak", "control characters"),
    ],
)
async def test_bad_usernames_are_refused_in_words_and_nothing_is_created(
    users: chat_grpc.UserServiceStub, operator: Metadata, username: str, words: str
) -> None:
    before = len((await users.ListUsers(pb.ListUsersRequest(), metadata=operator)).users)
    request = pb.CreateUserRequest(username=username, password=PASSWORD, role=pb.ROLE_VIEWER)
    code, message = await status_of(users.CreateUser(request, metadata=operator))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message, message
    after = (await users.ListUsers(pb.ListUsersRequest(), metadata=operator)).users
    assert len(after) == before and username.strip() not in {u.username for u in after}


async def test_a_megabyte_password_never_reaches_argon2(
    users: chat_grpc.UserServiceStub,
    operator: Metadata,
    sessions: Sessions,
    unique: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hashed: list[int] = []
    real_hash, real_verify = PasswordHasher.hash, PasswordHasher.verify

    def hash_spy(self: PasswordHasher, password: str | bytes, **kwargs: Any) -> str:
        hashed.append(len(password))
        return real_hash(self, password, **kwargs)

    def verify_spy(self: PasswordHasher, stored: str | bytes, password: str | bytes) -> bool:
        hashed.append(len(password))
        return real_verify(self, stored, password)

    monkeypatch.setattr(PasswordHasher, "hash", hash_spy)
    monkeypatch.setattr(PasswordHasher, "verify", verify_spy)
    huge = "p" * 1_000_000
    name = f"huge-{unique}"
    code, message = await status_of(
        users.CreateUser(pb.CreateUserRequest(username=name, password=huge, role=pb.ROLE_VIEWER), metadata=operator)
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "at most 256 characters" in message
    assert await stored_user(sessions, name) is None
    code, message = await status_of(users.SignIn(pb.SignInRequest(username=name, password=huge)))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "at most 256 characters" in message
    made = await new_user(users, operator, name)
    code, _ = await status_of(users.UpdateUser(pb.UpdateUserRequest(user_id=made.id, password=huge), metadata=operator))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert all(length <= 256 for length in hashed), hashed


async def test_other_bad_requests_are_refused_in_words(
    users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    name = f"dup-{unique}"
    await new_user(users, operator, name)
    code, message = await status_of(
        users.CreateUser(pb.CreateUserRequest(username=name, role=pb.ROLE_VIEWER), metadata=operator)
    )
    assert code == grpc.StatusCode.ABORTED and "taken" in message
    refused = [
        (pb.CreateUserRequest(username=f"n1-{unique}", password="short", role=pb.ROLE_VIEWER), "at least 8"),
        (pb.CreateUserRequest(username=f"n2-{unique}"), "role must be"),
        (
            pb.CreateUserRequest(username=f"n3-{unique}", role=pb.ROLE_VIEWER, grants=[pb.Grant(object_id="x")]),
            "its kind",
        ),
        (
            pb.CreateUserRequest(
                username=f"n4-{unique}", role=pb.ROLE_VIEWER, grants=[pb.Grant(kind=pb.GRANT_KIND_DATASET)]
            ),
            "id of its dataset",
        ),
    ]
    for request, words in refused:
        code, message = await status_of(users.CreateUser(request, metadata=operator))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message, (request, message)
    for call in (
        users.UpdateUser(pb.UpdateUserRequest(user_id="no-such-user", is_active=False), metadata=operator),
        users.DeleteUser(pb.DeleteUserRequest(user_id="no-such-user"), metadata=operator),
        users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id="no-such-user"), metadata=operator),
    ):
        code, message = await status_of(call)
        assert code == grpc.StatusCode.NOT_FOUND and "no-such-user" in message


# --- sessions -------------------------------------------------------------------------------------


async def read_token(sessions: Sessions, token_id: str) -> UserToken:
    async with sessions() as session:
        row = await session.get(UserToken, token_id)
        assert row is not None
        return row


async def test_a_session_slides_on_use_at_most_once_a_minute_and_never_past_thirty_days(
    sessions: Sessions, settings: Settings, unique: str
) -> None:
    start = utcnow()
    clock = [start]
    async with sessions.begin() as session:
        account = UserAccount(username=f"slider-{unique}", role="viewer")
        session.add(account)
        await session.flush()
        short = UserTokens(sessions, dataclasses.replace(settings, session_hours=2), clock=lambda: clock[0])
        issued = await short.start_session(session, account)
    assert issued.expires_at == start + dt.timedelta(hours=2)
    holder = await short.resolve(issued.token)
    clock[0] = start + dt.timedelta(seconds=30)
    await short.resolve(issued.token)
    assert (await read_token(sessions, holder.token_id)).expires_at == start + dt.timedelta(hours=2), "not yet"
    clock[0] = start + dt.timedelta(minutes=90)
    await short.resolve(issued.token)
    assert (await read_token(sessions, holder.token_id)).expires_at == clock[0] + dt.timedelta(hours=2)
    clock[0] = start + dt.timedelta(hours=4)
    with pytest.raises(Unauthenticated) as expired:
        await short.resolve(issued.token)
    assert expired.value.words == SESSION_EXPIRED
    # However often it is used, a session ends 30 days after it began.
    long = UserTokens(sessions, dataclasses.replace(settings, session_hours=24 * 60), clock=lambda: clock[0])
    clock[0] = start
    async with sessions.begin() as session:
        issued = await long.start_session(session, await session.get_one(UserAccount, account.id))
    assert issued.expires_at == start + MAX_SESSION_AGE
    clock[0] = start + dt.timedelta(days=29)
    holder = await long.resolve(issued.token)
    assert (await read_token(sessions, holder.token_id)).expires_at == start + MAX_SESSION_AGE
    clock[0] = start + MAX_SESSION_AGE
    with pytest.raises(Unauthenticated) as expired:
        await long.resolve(issued.token)
    assert expired.value.words == SESSION_EXPIRED


async def test_the_operator_token_has_no_account_of_its_own(
    users: chat_grpc.UserServiceStub, operator: Metadata
) -> None:
    for call in (
        users.SignOut(pb.SignOutRequest(), metadata=operator),
        users.ChangePassword(pb.ChangePasswordRequest(new_password=PASSWORD), metadata=operator),
        users.CreatePersonalToken(pb.CreatePersonalTokenRequest(name="x"), metadata=operator),
    ):
        assert await status_of(call) == (grpc.StatusCode.PERMISSION_DENIED, str(NO_ACCOUNT))
