"""The chat service's audit trail over gRPC, on real servers: each state-changing action of an
administrator (applications, API keys, share links, models, users, sign-in links, passwords,
personal tokens, sign-ins, improvements) adds exactly one row, named as its actor with the
address the gateway sent, and no row holds a secret; a refused change and a rolled-back one add
none; ListAudit filters, pages and orders the rows, and is for administrators only.

The rolled-back change (the last administrator demoting themselves) runs on a chat server of its
own over a fresh database (a SQLite file, or a new PostgreSQL database when the suite runs on
PostgreSQL): only there is one administrator certainly the last."""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as chat_grpc
from grpc_stubs.retrieval.v1 import retrieval_service_pb2 as retrieval_pb
from kbcore.db.tables import AuditEvent, ChatRecord, RecordStatus
from kbcore.permissions.wire import ADDRESS_KEY
from kbcore.rpc.caller_token import bearer
from kbcore.rpc.stubs import ChatStubs, RetrievalStubs
from services.chat.accounts.first_admin import FIRST_START, ensure_first_admin
from tests.fresh_chat import FreshChat, fresh_chat_server
from tests.grpc_status import status_of
from tests.harness import Stack

Metadata = tuple[tuple[str, str], ...]
Sessions = async_sessionmaker[AsyncSession]
ADDRESS = "203.0.113.7"
PASSWORD = "audit trail password 1"
NEW_PASSWORD = "audit trail password 2"
USER_PASSWORD = "a colleague's password"
RESET_PASSWORD = "a password reset by admin"
WRONG_PASSWORD = "not the password at all"
# The objects the chat service records changes of (datasets, documents, paragraphs: retrieval's).
CHAT_KINDS = frozenset({"application", "api_key", "access_token", "model", "user", "personal_token", "record"})
MODEL_KEY = "sk-audit-model-key-0123456789"
NEW_MODEL_KEY = "sk-audit-model-key-replaced-9876"


@dataclass
class Admin:
    id: str
    name: str
    caller: Metadata  # the session, with the client address the gateway would send
    token: str


async def signed_in_admin(users: chat_grpc.UserServiceStub, operator: Metadata, name: str) -> Admin:
    made = await users.CreateUser(
        pb.CreateUserRequest(username=name, password=PASSWORD, role=pb.ROLE_ADMIN), metadata=operator
    )
    signed = await users.SignIn(pb.SignInRequest(username=name, password=PASSWORD), metadata=((ADDRESS_KEY, ADDRESS),))
    return Admin(made.id, name, (*bearer(signed.token), (ADDRESS_KEY, ADDRESS)), signed.token)


async def trail(chat: ChatStubs, caller: Metadata, **filters: Any) -> pb.ListAuditResponse:
    reply: pb.ListAuditResponse = await chat.operations.ListAudit(pb.ListAuditRequest(**filters), metadata=caller)
    return reply


async def every_row(sessions: Sessions) -> list[AuditEvent]:
    async with sessions() as session:
        return list(await session.scalars(select(AuditEvent)))


AUDIT_COLUMNS = (
    "actor_kind",
    "actor_id",
    "actor_name",
    "client_address",
    "action",
    "object_kind",
    "object_id",
    "object_name",
    "detail",
)


def row_text(row: AuditEvent) -> str:
    return " ".join(str(getattr(row, column)) for column in AUDIT_COLUMNS)


async def new_application(chat: ChatStubs, caller: Metadata, name: str) -> str:
    made = await chat.applications.CreateApplication(
        pb.CreateApplicationRequest(application=pb.Application(name=name)), metadata=caller
    )
    return str(made.application.id)


async def record_in(chat: ChatStubs, caller: Metadata, sessions: Sessions, application_id: str) -> tuple[str, int]:
    opened = await chat.applications.OpenChat(pb.OpenChatRequest(application_id=application_id), metadata=caller)
    async with sessions.begin() as session:
        record = ChatRecord(chat_id=opened.chat_id, question="年假有几天？", status=RecordStatus.ANSWERED)
        session.add(record)
    return opened.chat_id, record.id


# --- every action, once ---------------------------------------------------------------------------


@dataclass
class Done:
    """What the actions made: (action, object_kind, object_id, object_name) expected once each,
    and the secrets no row may hold."""

    expected: list[tuple[str, str, str, str]] = dataclasses.field(default_factory=list)
    secrets: list[str] = dataclasses.field(default_factory=list)

    def saw(self, action: str, kind: str, object_id: str, name: str, *secrets: str) -> None:
        self.expected.append((action, kind, object_id, name))
        self.secrets.extend(secrets)


async def application_actions(chat: ChatStubs, me: Metadata, unique: str, done: Done) -> tuple[str, str]:
    name, renamed = f"audit-app-{unique}", f"audit-app-renamed-{unique}"
    app = await new_application(chat, me, name)
    done.saw("application.create", "application", app, name)
    changed = pb.Application(id=app, name=renamed, model_setting=pb.ModelSetting(prompt="{question}"))
    await chat.applications.UpdateApplication(pb.UpdateApplicationRequest(application=changed), metadata=me)
    done.saw("application.update", "application", app, renamed)
    # Refused before anything is written: no row.
    missing = pb.Application(id=str(uuid.uuid4()), name="nobody's")
    refused = chat.applications.UpdateApplication(pb.UpdateApplicationRequest(application=missing), metadata=me)
    assert (await status_of(refused))[0] == grpc.StatusCode.NOT_FOUND
    return app, renamed


async def credential_actions(chat: ChatStubs, me: Metadata, app: str, renamed: str, done: Done) -> None:
    key = await chat.access.CreateApiKey(pb.CreateApiKeyRequest(application_id=app), metadata=me)
    prefix = key.key[: len("application-") + 4]
    done.saw("api_key.create", "api_key", key.id, prefix, key.key)
    await chat.access.UpdateApiKey(pb.UpdateApiKeyRequest(application_id=app, id=key.id, is_active=False), metadata=me)
    done.saw("api_key.update", "api_key", key.id, prefix)
    # A second revoke is refused inside its transaction: nothing is written, no row either.
    again = chat.access.UpdateApiKey(
        pb.UpdateApiKeyRequest(application_id=app, id=key.id, is_active=False), metadata=me
    )
    assert (await status_of(again))[0] == grpc.StatusCode.ABORTED
    rotated = await chat.access.RotateApiKey(pb.RotateApiKeyRequest(application_id=app, id=key.id), metadata=me)
    done.saw("api_key.rotate", "api_key", key.id, rotated.key[: len(prefix)], rotated.key)
    link = await chat.access.CreateAccessToken(pb.CreateAccessTokenRequest(application_id=app), metadata=me)
    done.saw("access_token.create", "access_token", app, renamed, link.access_token)
    changed = pb.UpdateAccessTokenRequest(application_id=app, access_token=link.access_token, access_num=7)
    await chat.access.UpdateAccessToken(changed, metadata=me)
    done.saw("access_token.update", "access_token", app, renamed)
    new_link = await chat.access.RotateAccessToken(
        pb.RotateAccessTokenRequest(application_id=app, access_token=link.access_token), metadata=me
    )
    done.saw("access_token.rotate", "access_token", app, renamed, new_link.access_token)


async def model_actions(chat: ChatStubs, me: Metadata, unique: str, done: Done) -> None:
    name, renamed = f"audit-model-{unique}", f"audit-model-renamed-{unique}"
    made = await chat.models.CreateModel(
        pb.CreateModelRequest(
            name=name,
            provider="openai",
            base_url="https://models.example.invalid/v1",
            model="gpt-audit",
            purpose="chat",
            api_key=MODEL_KEY,
        ),
        metadata=me,
    )
    done.saw("model.create", "model", made.id, name, MODEL_KEY)
    await chat.models.UpdateModel(pb.UpdateModelRequest(id=made.id, name=renamed, api_key=NEW_MODEL_KEY), metadata=me)
    done.saw("model.update", "model", made.id, renamed, NEW_MODEL_KEY)
    refused = chat.models.UpdateModel(pb.UpdateModelRequest(id=made.id, purpose="nonsense"), metadata=me)
    assert (await status_of(refused))[0] == grpc.StatusCode.INVALID_ARGUMENT
    await chat.models.DeleteModel(pb.DeleteModelRequest(id=made.id), metadata=me)
    done.saw("model.delete", "model", made.id, renamed)


async def user_actions(users: chat_grpc.UserServiceStub, admin: Admin, unique: str, done: Done) -> None:
    me, name = admin.caller, f"audit-colleague-{unique}"
    made = await users.CreateUser(
        pb.CreateUserRequest(username=name, password=USER_PASSWORD, role=pb.ROLE_EDITOR), metadata=me
    )
    done.saw("user.create", "user", made.id, name, USER_PASSWORD)
    change = pb.UpdateUserRequest(user_id=made.id, role=pb.ROLE_VIEWER, password=RESET_PASSWORD)
    await users.UpdateUser(change, metadata=me)
    done.saw("user.update", "user", made.id, name, RESET_PASSWORD)
    link = await users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=made.id), metadata=me)
    done.saw("user.create_sign_in_link", "user", made.id, name, link.code)
    await users.DeleteUser(pb.DeleteUserRequest(user_id=made.id), metadata=me)
    done.saw("user.delete", "user", made.id, name)
    changed = pb.ChangePasswordRequest(current_password=PASSWORD, new_password=NEW_PASSWORD)
    await users.ChangePassword(changed, metadata=me)
    done.saw("user.change_password", "user", admin.id, admin.name, PASSWORD, NEW_PASSWORD)
    token = await users.CreatePersonalToken(pb.CreatePersonalTokenRequest(name="audit script"), metadata=me)
    done.saw("personal_token.create", "personal_token", token.info.id, "audit script", token.token)
    await users.RevokePersonalToken(pb.RevokePersonalTokenRequest(token_id=token.info.id), metadata=me)
    done.saw("personal_token.revoke", "personal_token", token.info.id, "audit script")


async def improvement(
    chat: ChatStubs, retrieval: RetrievalStubs, me: Metadata, sessions: Sessions, app: str, unique: str, done: Done
) -> tuple[str, str]:
    """An answer improved into a new dataset (and voted on: a visitor's feedback, never recorded)."""
    dataset = await retrieval.datasets.CreateDataset(retrieval_pb.CreateDatasetRequest(name=f"audit-{unique}"))
    chat_id, record_id = await record_in(chat, me, sessions, app)
    improve = pb.ImproveRecordRequest(
        application_id=app, chat_id=chat_id, record_id=str(record_id), dataset_id=dataset.dataset.id, answer="十天。"
    )
    improved = await chat.operations.ImproveRecord(improve, metadata=me)
    done.saw("record.improve", "record", str(record_id), "")
    await chat.operations.VoteRecord(
        pb.VoteRecordRequest(chat_id=chat_id, record_id=str(record_id), vote=pb.VOTE_UP), metadata=me
    )
    return dataset.dataset.id, improved.paragraph_id


async def test_each_change_is_recorded_once_as_its_actor_with_no_secret(
    chat: ChatStubs,
    users: chat_grpc.UserServiceStub,
    retrieval: RetrievalStubs,
    operator: Metadata,
    sessions: Sessions,
    unique: str,
) -> None:
    admin = await signed_in_admin(users, operator, f"audit-admin-{unique}")
    done = Done(secrets=[PASSWORD, admin.token])
    done.saw("user.sign_in", "user", admin.id, admin.name)
    me = admin.caller
    app, renamed = await application_actions(chat, me, unique, done)
    await credential_actions(chat, me, app, renamed, done)
    await model_actions(chat, me, unique, done)
    await user_actions(users, admin, unique, done)
    dataset_id, paragraph_id = await improvement(chat, retrieval, me, sessions, app, unique, done)

    listed = await trail(chat, me, actor=admin.name, page_size=500)
    assert {(e.actor_kind, e.actor_id, e.actor_name, e.client_address) for e in listed.events} == {
        ("user", admin.id, admin.name, ADDRESS)
    }
    # The improvement's paragraph and the visitor's question attached to it are the retrieval
    # service's rows, written as the administrator's.
    retrieval_side = [e for e in listed.events if e.object_kind not in CHAT_KINDS]
    assert {e.object_kind for e in retrieval_side} <= {"document", "paragraph", "question"}
    assert any(e.object_kind in ("document", "paragraph") for e in retrieval_side)
    [attached] = [e for e in retrieval_side if e.action == "question.attach"]
    assert paragraph_id in attached.detail
    chat_side = [e for e in listed.events if e.object_kind in CHAT_KINDS]
    rows = [(e.action, e.object_kind, e.object_id, e.object_name) for e in chat_side]
    assert Counter(rows) == Counter(done.expected)
    by_action = {e.action: e for e in chat_side}
    assert by_action["application.update"].detail == "name, model_setting.prompt"
    assert by_action["api_key.update"].detail == f"application {app}, revoked"
    assert by_action["access_token.update"].detail == "access_num"
    assert by_action["model.update"].detail == "name, api_key"
    assert by_action["user.update"].detail == "role editor → viewer, password reset, sessions and personal tokens ended"
    assert by_action["user.sign_in"].detail == "password"
    assert dataset_id in by_action["record.improve"].detail and paragraph_id in by_action["record.improve"].detail

    # The operator's creation of the administrator is the operator's.
    created = await trail(chat, operator, action="user.create", object_id=admin.id)
    assert [(e.actor_kind, e.actor_name) for e in created.events] == [("operator", "operator")]
    # A failed sign-in: the anonymous caller's, from its address, with the username tried.
    refused = users.SignIn(
        pb.SignInRequest(username=admin.name, password=WRONG_PASSWORD), metadata=((ADDRESS_KEY, ADDRESS),)
    )
    assert (await status_of(refused))[0] == grpc.StatusCode.UNAUTHENTICATED
    failed = await trail(chat, me, action="user.sign_in_failed", object_id=admin.id)
    assert [(e.actor_kind, e.actor_name, e.client_address, e.object_name) for e in failed.events] == [
        ("anonymous", "", ADDRESS, admin.name)
    ]
    secrets = [*done.secrets, WRONG_PASSWORD]
    leaked = [(row.action, s) for row in await every_row(sessions) for s in secrets if s in row_text(row)]
    assert not leaked


# --- reading the trail ---------------------------------------------------------------------------


@pytest.fixture
async def acted(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> tuple[Admin, str]:
    """An administrator who signed in, made an application and two API keys, and revoked one."""
    admin = await signed_in_admin(users, operator, f"audit-reader-{unique}")
    app = await new_application(chat, admin.caller, f"audit-read-{unique}")
    for _ in range(2):
        key = await chat.access.CreateApiKey(pb.CreateApiKeyRequest(application_id=app), metadata=admin.caller)
    revoke = pb.UpdateApiKeyRequest(application_id=app, id=key.id, is_active=False)
    await chat.access.UpdateApiKey(revoke, metadata=admin.caller)
    return admin, app


def when(event: pb.AuditEvent) -> dt.datetime:
    assert event.at.endswith("Z"), event.at
    return dt.datetime.fromisoformat(event.at)


async def test_the_trail_filters_pages_and_orders_newest_first(chat: ChatStubs, acted: tuple[Admin, str]) -> None:
    admin, app = acted
    me = admin.caller
    everything = await trail(chat, me, actor=admin.name)
    actions = [e.action for e in everything.events]
    assert everything.total == 5 and len(actions) == 5
    assert actions[0] == "api_key.update" and actions[-1] == "user.sign_in"  # newest first
    times = [when(e) for e in everything.events]
    assert times == sorted(times, reverse=True)
    assert [e.id for e in (await trail(chat, me, actor=admin.id)).events] == [e.id for e in everything.events]
    assert (await trail(chat, me, actor=f"nobody-{admin.name}")).total == 0

    keys = await trail(chat, me, actor=admin.name, action="api_key.")
    assert [e.action for e in keys.events] == ["api_key.update", "api_key.create", "api_key.create"]
    assert (await trail(chat, me, actor=admin.name, action="api_key%")).total == 0  # a prefix, not a pattern
    of_app = await trail(chat, me, object_id=app)
    assert [e.action for e in of_app.events] == ["application.create"]

    # Pages are slices of the same order; since is inclusive, until exclusive.
    pages = [await trail(chat, me, actor=admin.name, page=n, page_size=2) for n in (1, 2, 3)]
    assert [e.id for p in pages for e in p.events] == [e.id for e in everything.events]
    assert {p.total for p in pages} == {5}
    pivot = everything.events[2].at
    later = await trail(chat, me, actor=admin.name, since=pivot)
    earlier = await trail(chat, me, actor=admin.name, until=pivot)
    assert [e.id for e in later.events] + [e.id for e in earlier.events] == [e.id for e in everything.events]
    assert everything.events[2].id == later.events[-1].id
    offset = when(everything.events[2]).replace(tzinfo=dt.UTC).astimezone(dt.timezone(dt.timedelta(hours=8)))
    assert (await trail(chat, me, actor=admin.name, since=offset.isoformat())).total == later.total


async def test_unreadable_filters_are_refused_in_words(chat: ChatStubs, operator: Metadata) -> None:
    for filters, word in (
        ({"since": "yesterday"}, "since must be an RFC 3339 time"),
        ({"until": "2026-01-31T00:00:00"}, "until needs a time zone"),
        ({"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"}, "since must be earlier than until"),
        ({"page_size": 501}, "page_size must be between 1 and 500"),
        ({"page": -1}, "page must be 1 or more"),
    ):
        code, message = await status_of(chat.operations.ListAudit(pb.ListAuditRequest(**filters), metadata=operator))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and word in message, (filters, message)


async def test_only_administrators_read_the_trail(
    chat: ChatStubs, users: chat_grpc.UserServiceStub, operator: Metadata, unique: str
) -> None:
    for role in (pb.ROLE_EDITOR, pb.ROLE_VIEWER):
        made = await users.CreateUser(
            pb.CreateUserRequest(username=f"audit-{role}-{unique}", role=role), metadata=operator
        )
        link = await users.CreateSignInLink(pb.CreateSignInLinkRequest(user_id=made.id), metadata=operator)
        session = bearer((await users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=link.code))).token)
        code, message = await status_of(chat.operations.ListAudit(pb.ListAuditRequest(), metadata=session))
        assert code == grpc.StatusCode.PERMISSION_DENIED and message
    assert (await trail(chat, operator, page_size=1)).total >= 1


# --- a rolled-back change -----------------------------------------------------------------------


@pytest.fixture
async def fresh(stack: Stack, tmp_path: Path, database_url: str) -> AsyncIterator[FreshChat]:
    """A chat server of its own over a fresh database (no user yet)."""
    async with fresh_chat_server(stack, tmp_path, database_url) as server:
        yield server


async def test_a_refused_change_of_the_last_administrator_leaves_no_row(fresh: FreshChat) -> None:
    code = await ensure_first_admin(fresh.sessions, fresh.settings)
    assert code
    signed = await fresh.users.RedeemSignInLink(pb.RedeemSignInLinkRequest(code=code, client_address=ADDRESS))
    me, admin_id = bearer(signed.token), signed.user.id
    demote = pb.UpdateUserRequest(user_id=admin_id, role=pb.ROLE_EDITOR)
    assert (await status_of(fresh.users.UpdateUser(demote, metadata=me)))[0] == grpc.StatusCode.ABORTED
    off = pb.UpdateUserRequest(user_id=admin_id, is_active=False)
    assert (await status_of(fresh.users.UpdateUser(off, metadata=me)))[0] == grpc.StatusCode.ABORTED
    assert (await status_of(fresh.users.DeleteUser(pb.DeleteUserRequest(user_id=admin_id), metadata=me)))[0] == (
        grpc.StatusCode.ABORTED
    )
    rows = sorted(
        (r.action, r.actor_kind, r.actor_name, r.client_address, r.detail) for r in await every_row(fresh.sessions)
    )
    assert rows == [
        ("user.create", "service", "", "", "the first administrator, with a sign-in link"),
        ("user.create_sign_in_link", "service", "", "", FIRST_START),
        ("user.sign_in", "user", "admin", ADDRESS, "sign-in link"),
    ]
    # The same change that is allowed is recorded: the rows above were missing for the refusal.
    await fresh.users.UpdateUser(pb.UpdateUserRequest(user_id=admin_id, role=pb.ROLE_ADMIN), metadata=me)
    listed = await trail(fresh.chat, me, action="user.update")
    assert [(e.object_id, e.detail) for e in listed.events] == [(admin_id, "no change")]
