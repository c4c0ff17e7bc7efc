"""Credentials, in the chat service's own terms: the operator lists API keys (masked)
and share links with their use counts, revokes, re-activates, expires and rotates them, and
each change holds on the credential's very next call."""

from __future__ import annotations

import datetime as dt
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from sqlalchemy import update

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.db.tables import AccessToken, ApiKey
from kbcore.rpc.caller_token import bearer
from services.chat.access.credentials import API_KEY_EXPIRED, API_KEY_REVOKED, VISITOR_GONE
from services.chat.access.visitors import SHARE_LINK_EXPIRED, SHARE_LINK_OFF
from services.chat.callers.credential_expiry import parse_expiry
from tests.grpc_status import outcome_of, status_of

Metadata = tuple[tuple[str, str], ...]


def rfc3339(delta: dt.timedelta) -> str:
    return (dt.datetime.now(dt.UTC) + delta).isoformat().replace("+00:00", "Z")


async def new_application(chat: Any, operator: Metadata, name: str) -> str:
    made = await chat.applications.CreateApplication(
        chat_pb.CreateApplicationRequest(application=chat_pb.Application(name=name)), metadata=operator
    )
    return str(made.application.id)


async def new_key(chat: Any, operator: Metadata, application_id: str) -> chat_pb.CreateApiKeyResponse:
    made: chat_pb.CreateApiKeyResponse = await chat.access.CreateApiKey(
        chat_pb.CreateApiKeyRequest(application_id=application_id), metadata=operator
    )
    return made


async def whoami(chat: Any, token: str) -> tuple[grpc.StatusCode, str]:
    return await outcome_of(chat.access.WhoAmI(chat_pb.WhoAmIRequest(), metadata=bearer(token)))


async def ask(chat: Any, token: str, application_id: str) -> list[chat_pb.AskResponse]:
    opened = await chat.applications.OpenChat(
        chat_pb.OpenChatRequest(application_id=application_id), metadata=bearer(token)
    )
    call = chat.answers.Ask(chat_pb.AskRequest(chat_id=opened.chat_id, message="年假有几天？"), metadata=bearer(token))
    return [event async for event in call]


async def listed_key(chat: Any, operator: Metadata, application_id: str, key_id: str) -> chat_pb.ApiKeyInfo:
    listed = await chat.access.ListApiKeys(chat_pb.ListApiKeysRequest(application_id=application_id), metadata=operator)
    found: chat_pb.ApiKeyInfo = next(k for k in listed.keys if k.id == key_id)
    return found


async def test_keys_are_listed_masked_with_their_use_counts(chat, operator, unique: str) -> None:
    application_id = await new_application(chat, operator, f"listed-{unique}")
    first, second = await new_key(chat, operator, application_id), await new_key(chat, operator, application_id)
    await ask(chat, first.key, application_id)
    await ask(chat, first.key, application_id)
    await whoami(chat, first.key)  # only questions count, not every call
    listed = await chat.access.ListApiKeys(chat_pb.ListApiKeysRequest(application_id=application_id), metadata=operator)
    as_json = json_format.MessageToJson(listed)
    for key in (first.key, second.key):
        assert key not in as_json and key[len("application-") + 4 :] not in as_json
    by_id = {k.id: k for k in listed.keys}
    assert set(by_id) == {first.id, second.id}
    assert by_id[first.id].masked == first.key[: len("application-") + 4] + "…"
    assert by_id[first.id].use_count == 2 and by_id[first.id].last_used_at.endswith("Z")
    assert by_id[second.id].use_count == 0 and by_id[second.id].last_used_at == ""
    assert all(k.is_active and k.expires_at == "" for k in listed.keys)


async def test_a_revoked_key_is_refused_on_its_next_call_and_revoking_twice_is_409(chat, operator, unique: str) -> None:
    application_id = await new_application(chat, operator, f"revoked-{unique}")
    key = await new_key(chat, operator, application_id)
    assert (await whoami(chat, key.key))[0] == grpc.StatusCode.OK
    revoke = chat_pb.UpdateApiKeyRequest(application_id=application_id, id=key.id, is_active=False)
    revoked = await chat.access.UpdateApiKey(revoke, metadata=operator)
    assert revoked.is_active is False and revoked.id == key.id
    assert await whoami(chat, key.key) == (grpc.StatusCode.UNAUTHENTICATED, str(API_KEY_REVOKED))
    code, message = await status_of(chat.access.UpdateApiKey(revoke, metadata=operator))
    assert code == grpc.StatusCode.ABORTED and "already revoked" in message
    assert (await listed_key(chat, operator, application_id, key.id)).is_active is False, "nothing changed"
    again = chat_pb.UpdateApiKeyRequest(application_id=application_id, id=key.id, is_active=True)
    assert (await chat.access.UpdateApiKey(again, metadata=operator)).is_active is True
    assert (await whoami(chat, key.key))[0] == grpc.StatusCode.OK, "re-activated"


async def test_a_rotated_keys_old_value_fails_and_the_new_one_works(chat, operator, unique: str) -> None:
    application_id = await new_application(chat, operator, f"rotated-{unique}")
    old = await new_key(chat, operator, application_id)
    rotated = await chat.access.RotateApiKey(
        chat_pb.RotateApiKeyRequest(application_id=application_id, id=old.id), metadata=operator
    )
    assert rotated.id == old.id and rotated.key != old.key and rotated.key.startswith("application-")
    code, _ = await whoami(chat, old.key)
    assert code == grpc.StatusCode.UNAUTHENTICATED
    assert (await whoami(chat, rotated.key))[0] == grpc.StatusCode.OK
    assert len(await ask(chat, rotated.key, application_id)) > 0
    assert (await listed_key(chat, operator, application_id, old.id)).masked == rotated.key[:16] + "…"


async def test_a_key_past_its_expiry_is_refused_and_clearing_the_expiry_restores_it(
    chat, operator, sessions, unique: str
) -> None:
    application_id = await new_application(chat, operator, f"expiring-{unique}")
    key = await new_key(chat, operator, application_id)
    later = rfc3339(dt.timedelta(days=30))
    change = chat_pb.UpdateApiKeyRequest(application_id=application_id, id=key.id, expires_at=later)
    updated = await chat.access.UpdateApiKey(change, metadata=operator)
    assert updated.expires_at.startswith(later[:16]) and updated.is_active
    assert (await whoami(chat, key.key))[0] == grpc.StatusCode.OK
    async with sessions.begin() as session:  # the expiry passes (it cannot be set in the past)
        past = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=1)
        await session.execute(update(ApiKey).where(ApiKey.id == key.id).values(expires_at=past))
    assert await whoami(chat, key.key) == (grpc.StatusCode.UNAUTHENTICATED, str(API_KEY_EXPIRED))
    never = chat_pb.UpdateApiKeyRequest(application_id=application_id, id=key.id, expires_at="")
    assert (await chat.access.UpdateApiKey(never, metadata=operator)).expires_at == ""
    assert (await whoami(chat, key.key))[0] == grpc.StatusCode.OK


@pytest.mark.parametrize(
    ("expires_at", "words"),
    [
        ("2020-01-01T00:00:00Z", "in the future"),
        ("tomorrow", "RFC 3339"),
        ("2030-01-01T00:00:00", "time zone"),
        ("2999-01-01T00:00:00Z", "within ten years"),
        ("9" * 10_000, "RFC 3339"),
        ("2030-02-30T00:00:00Z", "RFC 3339"),
    ],
)
async def test_bad_expiries_are_refused_and_change_nothing(
    chat, operator, unique: str, expires_at: str, words: str
) -> None:
    application_id = await new_application(chat, operator, f"bad-expiry-{unique}")
    key = await new_key(chat, operator, application_id)
    change = chat_pb.UpdateApiKeyRequest(
        application_id=application_id, id=key.id, expires_at=expires_at, is_active=False
    )
    code, message = await status_of(chat.access.UpdateApiKey(change, metadata=operator))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message and len(message) < 200
    still = await listed_key(chat, operator, application_id, key.id)
    assert still.is_active and still.expires_at == ""


def test_an_expiry_with_an_offset_is_stored_as_utc() -> None:
    now = dt.datetime(2026, 11, 30, 0, 0)
    assert parse_expiry("2026-12-01T08:00:00+08:00", now) == dt.datetime(2026, 12, 1, 0, 0)
    assert parse_expiry("  ", now) is None


async def test_unknown_keys_other_applications_keys_and_non_operators_are_refused(chat, operator, unique: str) -> None:
    mine = await new_application(chat, operator, f"mine-{unique}")
    theirs = await new_application(chat, operator, f"theirs-{unique}")
    their_key = await new_key(chat, operator, theirs)
    my_key = await new_key(chat, operator, mine)
    for key_id in ("no-such-key", their_key.id, ""):
        for call in (
            chat.access.UpdateApiKey(
                chat_pb.UpdateApiKeyRequest(application_id=mine, id=key_id, is_active=False), metadata=operator
            ),
            chat.access.RotateApiKey(chat_pb.RotateApiKeyRequest(application_id=mine, id=key_id), metadata=operator),
        ):
            code, message = await status_of(call)
            assert code == grpc.StatusCode.NOT_FOUND and "does not exist in application" in message
    assert (await whoami(chat, their_key.key))[0] == grpc.StatusCode.OK, "their key was not touched"
    code, _ = await status_of(
        chat.access.ListApiKeys(chat_pb.ListApiKeysRequest(application_id="nope"), metadata=operator)
    )
    assert code == grpc.StatusCode.NOT_FOUND
    for call in (
        chat.access.ListApiKeys(chat_pb.ListApiKeysRequest(application_id=mine), metadata=bearer(my_key.key)),
        chat.access.ListAccessTokens(chat_pb.ListAccessTokensRequest(application_id=mine), metadata=bearer(my_key.key)),
        chat.access.RotateApiKey(
            chat_pb.RotateApiKeyRequest(application_id=mine, id=my_key.id), metadata=bearer(my_key.key)
        ),
    ):
        code, _ = await status_of(call)
        assert code == grpc.StatusCode.PERMISSION_DENIED


async def share_link(chat: Any, operator: Metadata, application_id: str, **quota: int) -> str:
    made = await chat.access.CreateAccessToken(
        chat_pb.CreateAccessTokenRequest(application_id=application_id, **quota), metadata=operator
    )
    return str(made.access_token)


async def sign_in(chat: Any, access_token: str) -> str:
    signed_in = await chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=access_token))
    return str(signed_in.token)


async def test_a_switched_off_link_refuses_sign_in_and_its_visitors_until_switched_on(
    chat, operator, unique: str
) -> None:
    application_id = await new_application(chat, operator, f"link-off-{unique}")
    link = await share_link(chat, operator, application_id)
    visitor = await sign_in(chat, link)
    off = chat_pb.UpdateAccessTokenRequest(application_id=application_id, access_token=link, is_active=False)
    assert (await chat.access.UpdateAccessToken(off, metadata=operator)).is_active is False
    code, message = await status_of(
        chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=link))
    )
    assert (code, message) == (grpc.StatusCode.UNAUTHENTICATED, str(SHARE_LINK_OFF))
    assert await whoami(chat, visitor) == (grpc.StatusCode.UNAUTHENTICATED, str(SHARE_LINK_OFF))
    code, message = await status_of(chat.access.UpdateAccessToken(off, metadata=operator))
    assert code == grpc.StatusCode.ABORTED and "already revoked" in message
    await share_link(chat, operator, application_id)  # asking for the link again does not re-open it
    assert await whoami(chat, visitor) == (grpc.StatusCode.UNAUTHENTICATED, str(SHARE_LINK_OFF))
    on = chat_pb.UpdateAccessTokenRequest(application_id=application_id, access_token=link, is_active=True)
    await chat.access.UpdateAccessToken(on, metadata=operator)
    assert (await whoami(chat, visitor))[0] == grpc.StatusCode.OK


async def test_an_expired_link_refuses_sign_in_and_its_visitors(chat, operator, sessions, unique: str) -> None:
    application_id = await new_application(chat, operator, f"link-expired-{unique}")
    link = await share_link(chat, operator, application_id)
    visitor = await sign_in(chat, link)
    soon = chat_pb.UpdateAccessTokenRequest(
        application_id=application_id, access_token=link, expires_at=rfc3339(dt.timedelta(hours=1))
    )
    assert (await chat.access.UpdateAccessToken(soon, metadata=operator)).expires_at != ""
    async with sessions.begin() as session:
        past = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=1)
        await session.execute(
            update(AccessToken).where(AccessToken.application_id == application_id).values(expires_at=past)
        )
    code, message = await status_of(
        chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=link))
    )
    assert (code, message) == (grpc.StatusCode.UNAUTHENTICATED, str(SHARE_LINK_EXPIRED))
    assert await whoami(chat, visitor) == (grpc.StatusCode.UNAUTHENTICATED, str(SHARE_LINK_EXPIRED))


async def test_rotating_a_link_ends_the_old_link_and_its_visitor_tokens(chat, operator, unique: str) -> None:
    application_id = await new_application(chat, operator, f"link-rotated-{unique}")
    old = await share_link(chat, operator, application_id, access_num=7, daily_cap=70)
    visitor = await sign_in(chat, old)
    assert len(await ask(chat, visitor, application_id)) > 0
    rotated = await chat.access.RotateAccessToken(
        chat_pb.RotateAccessTokenRequest(application_id=application_id, access_token=old), metadata=operator
    )
    assert rotated.access_token != old and (rotated.access_num, rotated.daily_cap) == (7, 70)
    assert rotated.use_count == 1, "the visitor's question was counted against the link"
    code, _ = await status_of(chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=old)))
    assert code == grpc.StatusCode.NOT_FOUND
    assert await whoami(chat, visitor) == (grpc.StatusCode.UNAUTHENTICATED, str(VISITOR_GONE))
    fresh = await sign_in(chat, rotated.access_token)
    assert (await whoami(chat, fresh))[0] == grpc.StatusCode.OK
    listed = await chat.access.ListAccessTokens(
        chat_pb.ListAccessTokensRequest(application_id=application_id), metadata=operator
    )
    assert [t.access_token for t in listed.tokens] == [rotated.access_token]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"access_num": 0}, "access_num must be between 1 and 100000"),
        ({"access_num": 100_001}, "access_num must be between 1 and 100000"),
        ({"daily_cap": 0}, "daily_cap must be between 1 and 10000000"),
        ({"daily_cap": 2_000_000_000}, "daily_cap must be between 1 and 10000000"),
        ({"expires_at": "2001-01-01T00:00:00Z"}, "in the future"),
    ],
)
async def test_bad_link_changes_are_refused_and_change_nothing(
    chat, operator, unique: str, change: dict[str, Any], words: str
) -> None:
    application_id = await new_application(chat, operator, f"bad-link-{unique}")
    link = await share_link(chat, operator, application_id, access_num=5, daily_cap=50)
    request = chat_pb.UpdateAccessTokenRequest(application_id=application_id, access_token=link, **change)
    code, message = await status_of(chat.access.UpdateAccessToken(request, metadata=operator))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and words in message
    [still] = (
        await chat.access.ListAccessTokens(
            chat_pb.ListAccessTokensRequest(application_id=application_id), metadata=operator
        )
    ).tokens
    assert (still.access_num, still.daily_cap, still.expires_at) == (5, 50, "")


async def test_another_applications_link_is_not_found(chat, operator, unique: str) -> None:
    mine = await new_application(chat, operator, f"link-mine-{unique}")
    theirs = await new_application(chat, operator, f"link-theirs-{unique}")
    await share_link(chat, operator, mine)
    their_link = await share_link(chat, operator, theirs)
    for call in (
        chat.access.UpdateAccessToken(
            chat_pb.UpdateAccessTokenRequest(application_id=mine, access_token=their_link, is_active=False),
            metadata=operator,
        ),
        chat.access.RotateAccessToken(
            chat_pb.RotateAccessTokenRequest(application_id=mine, access_token=their_link), metadata=operator
        ),
    ):
        code, message = await status_of(call)
        assert code == grpc.StatusCode.NOT_FOUND and "does not exist in application" in message
    assert await sign_in(chat, their_link), "their link still works"
