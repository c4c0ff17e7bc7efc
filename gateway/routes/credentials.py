"""The credentials an operator handed out, on MaxKB v1's routes
(apps/application/urls.py: ``<application_id>/api_key``, ``<application_id>/api_key/<api_key_id>``,
``<application_id>/access_token``; bodies from serializers/application_serializers.py).

- ``GET /api/application/{id}/api_key``: the keys, masked (MaxKB lists ``secret_key``; here
  only its prefix, since the key is stored as a hash and shown once). Creating one stays
  ``POST`` in ``gateway.routes.access``.
- ``PUT /api/application/{id}/api_key/{api_key_id}``: MaxKB's ``{is_active, allow_cross_domain,
  cross_domain_list}``: ``is_active`` is mirrored, ``expires_at`` (RFC 3339, "" = never) added;
  the cross-domain fields are not kept per key (CORS is the gateway's ``KB_CORS_ORIGINS``).
- ``DELETE …/api_key/{api_key_id}`` revokes the key (MaxKB deletes it; the row stays here so its
  use count and the log's record of who asked keep their meaning).
- ``POST …/api_key/{api_key_id}/rotate`` (not in MaxKB): a new secret for the same key id.
- ``GET/PUT /api/application/{id}/access_token``: MaxKB's ``{access_token_reset, is_active,
  access_num, white_active, white_list, show_source}``, plus ``daily_cap`` and ``expires_at``;
  ``access_token_reset: true`` rotates. One transaction does all a PUT asks or nothing of it.
  ``white_active: true`` limits the sites that may show the link's page in a frame (embed it) to
  ``white_list`` (origins or hosts; the browser enforces it through the page's
  ``frame-ancestors``); false lets any site. Whether visitors see the sources is the
  application's ``show_source`` here: ``show_source: true`` is accepted, false is 400 naming it.

Revoking what is revoked is 409 and changes nothing; unknown ids, and another application's,
are 404; only the operator may call these (403 for anyone else, 401 for nobody)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field, StringConstraints, model_validator

from gateway.backends import Backend, CallerBackend
from gateway.errors import ApiError, ok
from gateway.presenter import access_token_out, api_key_out
from gateway.shapes.applications import AccessTokenOut, ApiKeyOut, NewApiKeyOut
from gateway.shapes.envelope import REFUSALS, Envelope
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.words.said import said

router = APIRouter(prefix="/api/application", tags=["credentials"], responses=REFUSALS)

# Long enough for any RFC 3339 time; the chat service says what is wrong with one that fits.
Expiry = Annotated[str, StringConstraints(max_length=64)]
EXPIRY_HELP = 'RFC 3339 time in the future, within ten years (e.g. 2027-01-31T00:00:00Z); "" = never expires'


class ApiKeyEditIn(BaseModel):
    is_active: bool | None = Field(default=None, description="false revokes the key, true re-activates it")
    expires_at: Expiry | None = Field(default=None, description=EXPIRY_HELP)

    @model_validator(mode="after")
    def _something_to_change(self) -> ApiKeyEditIn:
        if self.is_active is None and self.expires_at is None:
            raise ValueError(said("send_least_one_active_expires"))
        return self


class AccessTokenEditIn(BaseModel):
    access_token_reset: bool = Field(
        default=False, description="true: a new link token; the old link and its visitors' tokens stop at once"
    )
    is_active: bool | None = None
    access_num: int | None = Field(default=None, ge=1, le=100_000, description="questions per visitor per UTC day")
    daily_cap: int | None = Field(
        default=None, ge=1, le=10_000_000, description="questions per UTC day from all the link's visitors together"
    )
    expires_at: Expiry | None = Field(default=None, description=EXPIRY_HELP)
    white_active: bool | None = Field(
        default=None, description="true: only the sites in white_list may embed the link's page; false: any site"
    )
    white_list: list[Annotated[str, StringConstraints(max_length=300)]] | None = Field(
        default=None,
        max_length=100,
        description="sites allowed to embed: origins (https://www.example.com) or hosts (*.example.com)",
    )
    show_source: bool | None = Field(default=None, description="only true: set it on the application instead")

    @model_validator(mode="after")
    def _something_to_change(self) -> AccessTokenEditIn:
        changes = (self.is_active, self.access_num, self.daily_cap, self.expires_at, self.white_active, self.white_list)
        if not self.access_token_reset and all(v is None for v in changes):
            raise ValueError(said("send_least_one_access_token_reset"))
        if self.show_source is False:
            raise ValueError(said("show_source_application_setting_here_send"))
        return self


@router.get("/{app_id}/api_key", response_model=Envelope[list[ApiKeyOut]])
async def list_api_keys(app_id: str, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.access.ListApiKeys, pb.ListApiKeysRequest(application_id=app_id))
    return ok([api_key_out(k).wire() for k in reply.keys])


async def _update_key(backend: Backend, change: pb.UpdateApiKeyRequest) -> JSONResponse:
    return ok(api_key_out(await backend.unary(backend.chat.access.UpdateApiKey, change)).wire())


@router.put("/{app_id}/api_key/{api_key_id}", response_model=Envelope[ApiKeyOut])
async def edit_api_key(app_id: str, api_key_id: str, body: ApiKeyEditIn, backend: CallerBackend) -> JSONResponse:
    change = pb.UpdateApiKeyRequest(application_id=app_id, id=api_key_id)
    if body.is_active is not None:
        change.is_active = body.is_active
    if body.expires_at is not None:
        change.expires_at = body.expires_at
    return await _update_key(backend, change)


@router.delete("/{app_id}/api_key/{api_key_id}", response_model=Envelope[ApiKeyOut])
async def revoke_api_key(app_id: str, api_key_id: str, backend: CallerBackend) -> JSONResponse:
    return await _update_key(backend, pb.UpdateApiKeyRequest(application_id=app_id, id=api_key_id, is_active=False))


@router.post("/{app_id}/api_key/{api_key_id}/rotate", response_model=Envelope[NewApiKeyOut])
async def rotate_api_key(app_id: str, api_key_id: str, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(
        backend.chat.access.RotateApiKey, pb.RotateApiKeyRequest(application_id=app_id, id=api_key_id)
    )
    return ok({"id": reply.id, "secret_key": reply.key, "application_id": app_id})


@router.get("/{app_id}/access_token", response_model=Envelope[AccessTokenOut])
async def get_access_token(app_id: str, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.access.ListAccessTokens, pb.ListAccessTokensRequest(application_id=app_id))
    if not reply.tokens:
        raise ApiError(404, said("application_has_no_share_link_yet", app_id=app_id))
    return ok(access_token_out(reply.tokens[0]).wire())


@router.put("/{app_id}/access_token", response_model=Envelope[AccessTokenOut])
async def edit_access_token(app_id: str, body: AccessTokenEditIn, backend: CallerBackend) -> JSONResponse:
    """One call, one transaction: the changes and the rotation happen together or not at all."""
    change = pb.UpdateAccessTokenRequest(application_id=app_id, access_token_reset=body.access_token_reset)
    for name in ("is_active", "access_num", "daily_cap", "expires_at"):
        if (value := getattr(body, name)) is not None:
            setattr(change, name, value)
    if body.white_active is not None:
        change.sites_limited = body.white_active
    if body.white_list is not None:
        change.allowed_sites.sites.extend(body.white_list)
        change.allowed_sites.SetInParent()  # an empty list is a change too: no site listed
    return ok(access_token_out(await backend.unary(backend.chat.access.UpdateAccessToken, change)).wire())
