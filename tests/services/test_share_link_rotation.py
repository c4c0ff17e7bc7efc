"""``UpdateAccessToken`` with ``access_token_reset`` rotates the share link and applies the
other changes in one call: the old link and its visitors' tokens stop, the new link works, and
``is_active`` ends as sent, whether or not it was already so."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from grpc_stubs.chat.v1 import chat_service_pb2 as chat_pb
from kbcore.rpc.caller_token import bearer
from services.chat.access.credentials import VISITOR_GONE
from services.chat.access.visitors import SHARE_LINK_OFF
from tests.grpc_status import outcome_of, status_of

Metadata = tuple[tuple[str, str], ...]


async def new_link(chat: Any, operator: Metadata, name: str) -> tuple[str, str]:
    made = await chat.applications.CreateApplication(
        chat_pb.CreateApplicationRequest(application=chat_pb.Application(name=name)), metadata=operator
    )
    application_id = str(made.application.id)
    link = await chat.access.CreateAccessToken(
        chat_pb.CreateAccessTokenRequest(application_id=application_id, access_num=5, daily_cap=50), metadata=operator
    )
    return application_id, str(link.access_token)


async def sign_in(chat: Any, access_token: str) -> tuple[grpc.StatusCode, str]:
    """(status, visitor token or refusal)."""
    try:
        reply = await chat.access.AuthenticateVisitor(chat_pb.AuthenticateVisitorRequest(access_token=access_token))
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""
    return grpc.StatusCode.OK, str(reply.token)


async def whoami(chat: Any, token: str) -> tuple[grpc.StatusCode, str]:
    return await outcome_of(chat.access.WhoAmI(chat_pb.WhoAmIRequest(), metadata=bearer(token)))


@pytest.mark.parametrize("is_active", [True, False])
async def test_one_call_rotates_the_link_and_sets_is_active_as_sent(
    chat, operator, unique: str, is_active: bool
) -> None:
    application_id, old = await new_link(chat, operator, f"rpc-rotate-{is_active}-{unique}")
    code, visitor = await sign_in(chat, old)
    assert code == grpc.StatusCode.OK

    rotated = await chat.access.UpdateAccessToken(
        chat_pb.UpdateAccessTokenRequest(
            application_id=application_id, access_token=old, is_active=is_active, access_num=8, access_token_reset=True
        ),
        metadata=operator,
    )

    assert rotated.access_token != old
    assert (rotated.is_active, rotated.access_num, rotated.daily_cap) == (is_active, 8, 50)
    assert (await sign_in(chat, old))[0] == grpc.StatusCode.NOT_FOUND
    assert await whoami(chat, visitor) == (grpc.StatusCode.UNAUTHENTICATED, str(VISITOR_GONE))
    code, fresh = await sign_in(chat, rotated.access_token)
    if is_active:
        assert code == grpc.StatusCode.OK and (await whoami(chat, fresh))[0] == grpc.StatusCode.OK
    else:
        assert (code, fresh) == (grpc.StatusCode.UNAUTHENTICATED, str(SHARE_LINK_OFF))


async def test_a_rotation_with_a_refused_change_rotates_nothing(chat, operator, unique: str) -> None:
    application_id, old = await new_link(chat, operator, f"rpc-refused-{unique}")
    request = chat_pb.UpdateAccessTokenRequest(
        application_id=application_id, access_token=old, daily_cap=0, access_token_reset=True
    )

    code, message = await status_of(chat.access.UpdateAccessToken(request, metadata=operator))

    assert code == grpc.StatusCode.INVALID_ARGUMENT and "daily_cap" in message
    [still] = (
        await chat.access.ListAccessTokens(
            chat_pb.ListAccessTokensRequest(application_id=application_id), metadata=operator
        )
    ).tokens
    assert (still.access_token, still.daily_cap) == (old, 50)
    assert (await sign_in(chat, old))[0] == grpc.StatusCode.OK
