"""AccessService: who a caller is, and an application's API keys and share links, created,
listed masked, revoked, re-activated, given an expiry, rotated by those who may change the
application (the rules are ``services.chat.access.credential_admin``)."""

from __future__ import annotations

from typing import Any

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.chat.v1 import chat_service_pb2_grpc as pb_grpc
from kbcore.db.tables import AccessToken, ApiKey
from kbcore.errors import InvalidRequest
from kbcore.permissions.roles import Need
from kbcore.rpc.error_mapping import Context, unary_errors
from kbcore.words.said import said
from services.chat.access.credential_admin import CredentialAdmin, KeyChange, LinkChange, masked
from services.chat.access.credentials import (
    DEFAULT_ACCESS_NUM,
    DEFAULT_DAILY_CAP,
    MAX_ACCESS_NUM,
    MAX_DAILY_CAP,
    Credentials,
)
from services.chat.access.framing_sites import framing_sites, read_sites
from services.chat.access.rules import require
from services.chat.accounts.user_messages import user_info
from services.chat.accounts.user_store import UserStore
from services.chat.callers.chat_caller import CallerKind, current_caller
from services.chat.callers.credential_expiry import parse_expiry
from services.chat.chat_messages import _timestamp
from services.chat.store import ChatStore

CALLER_KINDS = {
    CallerKind.OPERATOR: pb.WhoAmIResponse.KIND_OPERATOR,
    CallerKind.APPLICATION: pb.WhoAmIResponse.KIND_APPLICATION,
    CallerKind.VISITOR: pb.WhoAmIResponse.KIND_VISITOR,
    CallerKind.USER: pb.WhoAmIResponse.KIND_USER,
}


def key_info(row: ApiKey) -> pb.ApiKeyInfo:
    """A key as a list shows it: its prefix and an ellipsis, never the key or its hash."""
    return pb.ApiKeyInfo(
        id=row.id,
        application_id=row.application_id,
        masked=masked(row.prefix),
        is_active=row.is_active,
        expires_at=_timestamp(row.expires_at),
        use_count=row.use_count or 0,
        last_used_at=_timestamp(row.last_used_at),
        created_at=_timestamp(row.created_at),
    )


def link_info(row: AccessToken) -> pb.AccessTokenInfo:
    return pb.AccessTokenInfo(
        application_id=row.application_id,
        access_token=row.access_token,
        access_num=row.access_num,
        daily_cap=row.daily_cap,
        is_active=row.is_active,
        expires_at=_timestamp(row.expires_at),
        use_count=row.use_count or 0,
        last_used_at=_timestamp(row.last_used_at),
        created_at=_timestamp(row.created_at),
        sites_limited=row.sites_limited,
        allowed_sites=read_sites(row.allowed_sites),
    )


class AccessRpcs(pb_grpc.AccessServiceServicer):
    def __init__(self, store: ChatStore, credentials: Credentials, users: UserStore):
        """``credentials`` issues keys, links and visitor tokens; the store knows the applications;
        ``users`` the accounts WhoAmI describes."""
        self._store = store
        self._credentials = credentials
        self._admin = CredentialAdmin(store.sessions)
        self._users = users

    async def _operators_application(self, application_id: str) -> str:
        """The application's id, once the caller is known to be allowed to change it and it exists."""
        require(current_caller(), Need.APPLICATION_WRITE, application_id)
        return (await self._store.get_application(application_id)).id

    @unary_errors
    async def CreateApiKey(self, request: pb.CreateApiKeyRequest, context: Context) -> pb.CreateApiKeyResponse:
        application_id = await self._operators_application(request.application_id)
        key_id, key = await self._credentials.create_api_key(application_id)
        return pb.CreateApiKeyResponse(id=key_id, key=key)

    @unary_errors
    async def CreateAccessToken(
        self, request: pb.CreateAccessTokenRequest, context: Context
    ) -> pb.CreateAccessTokenResponse:
        require(current_caller(), Need.APPLICATION_WRITE, request.application_id)
        access_num = request.access_num or DEFAULT_ACCESS_NUM
        if not 1 <= access_num <= MAX_ACCESS_NUM:
            raise InvalidRequest(
                said("access_num_must_be_between_1", max_access_num=MAX_ACCESS_NUM, access_num=access_num)
            )
        daily_cap = request.daily_cap or DEFAULT_DAILY_CAP
        if not 1 <= daily_cap <= MAX_DAILY_CAP:
            raise InvalidRequest(said("daily_cap_must_be_between_1", max_daily_cap=MAX_DAILY_CAP, daily_cap=daily_cap))
        application_id = await self._operators_application(request.application_id)
        link = await self._credentials.set_access_token(application_id, access_num, daily_cap)
        return pb.CreateAccessTokenResponse(
            application_id=application_id,
            access_token=link.access_token,
            access_num=link.access_num,
            daily_cap=link.daily_cap,
        )

    @unary_errors
    async def AuthenticateVisitor(
        self, request: pb.AuthenticateVisitorRequest, context: Context
    ) -> pb.AuthenticateVisitorResponse:
        if not request.access_token.strip():
            raise InvalidRequest(said("access_token_must_not_be_empty"))
        visitor, token = await self._credentials.new_visitor(
            request.access_token.strip(), request.visitor_token.strip()
        )
        return pb.AuthenticateVisitorResponse(token=token, application_id=visitor.application_id, visitor_id=visitor.id)

    @unary_errors
    async def GetShareLinkSites(self, request: pb.GetShareLinkSitesRequest, context: Context) -> pb.ShareLinkSites:
        link = await self._credentials.link_by_token(request.access_token.strip()[:64])
        if link is None or not link.sites_limited:
            return pb.ShareLinkSites()
        return pb.ShareLinkSites(sites_limited=True, allowed_sites=read_sites(link.allowed_sites))

    @unary_errors
    async def WhoAmI(self, request: pb.WhoAmIRequest, context: Context) -> pb.WhoAmIResponse:
        caller = current_caller()
        if caller.kind is CallerKind.USER:
            user = user_info(await self._users.get(caller.user_id))
            return pb.WhoAmIResponse(kind=pb.WhoAmIResponse.KIND_USER, user=user)
        return pb.WhoAmIResponse(kind=CALLER_KINDS[caller.kind], application_id=caller.application_id)

    @unary_errors
    async def ListApiKeys(self, request: pb.ListApiKeysRequest, context: Context) -> pb.ListApiKeysResponse:
        application_id = await self._operators_application(request.application_id)
        return pb.ListApiKeysResponse(keys=[key_info(k) for k in await self._admin.list_keys(application_id)])

    @unary_errors
    async def UpdateApiKey(self, request: pb.UpdateApiKeyRequest, context: Context) -> pb.ApiKeyInfo:
        application_id = await self._operators_application(request.application_id)
        row = await self._admin.update_key(application_id, request.id, _key_change(request))
        return key_info(row)

    @unary_errors
    async def RotateApiKey(self, request: pb.RotateApiKeyRequest, context: Context) -> pb.CreateApiKeyResponse:
        application_id = await self._operators_application(request.application_id)
        row, key = await self._admin.rotate_key(application_id, request.id)
        return pb.CreateApiKeyResponse(id=row.id, key=key)

    @unary_errors
    async def ListAccessTokens(
        self, request: pb.ListAccessTokensRequest, context: Context
    ) -> pb.ListAccessTokensResponse:
        application_id = await self._operators_application(request.application_id)
        return pb.ListAccessTokensResponse(tokens=[link_info(t) for t in await self._admin.list_links(application_id)])

    @unary_errors
    async def UpdateAccessToken(self, request: pb.UpdateAccessTokenRequest, context: Context) -> pb.AccessTokenInfo:
        application_id = await self._operators_application(request.application_id)
        row = await self._admin.update_link(application_id, request.access_token, _link_change(request))
        return link_info(row)

    @unary_errors
    async def RotateAccessToken(self, request: pb.RotateAccessTokenRequest, context: Context) -> pb.AccessTokenInfo:
        application_id = await self._operators_application(request.application_id)
        return link_info(await self._admin.rotate_link(application_id, request.access_token))


def _expiry_and_activity(request: pb.UpdateApiKeyRequest | pb.UpdateAccessTokenRequest) -> dict[str, Any]:
    """The fields the request sets (proto3 ``optional``: an unset field is left as it is)."""
    fields: dict[str, Any] = {}
    if request.HasField("is_active"):
        fields["is_active"] = request.is_active
    if request.HasField("expires_at"):
        fields.update(expires_at=parse_expiry(request.expires_at), set_expiry=True)
    return fields


def _key_change(request: pb.UpdateApiKeyRequest) -> KeyChange:
    return KeyChange(**_expiry_and_activity(request))


def _link_change(request: pb.UpdateAccessTokenRequest) -> LinkChange:
    return LinkChange(
        **_expiry_and_activity(request),
        access_num=request.access_num if request.HasField("access_num") else None,
        daily_cap=request.daily_cap if request.HasField("daily_cap") else None,
        reset=request.access_token_reset,
        sites_limited=request.sites_limited if request.HasField("sites_limited") else None,
        allowed_sites=framing_sites(request.allowed_sites.sites) if request.HasField("allowed_sites") else None,
    )
