"""API keys and share links (operator), visitor sign-in through a share link, and the
conversation log as CSV."""

from __future__ import annotations

import csv
import io

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from gateway.backends import AnonymousBackend, CallerBackend
from gateway.caller import presented_token
from gateway.errors import ok
from gateway.presenter import EXPORT_COLUMNS, export_row
from gateway.shapes.applications import NewAccessTokenOut, NewApiKeyOut
from gateway.shapes.envelope import REFUSALS, Envelope, download
from gateway.signin_limit import signin_admitted
from grpc_stubs.chat.v1 import chat_service_pb2 as pb

router = APIRouter(prefix="/api/application", tags=["access"], responses=REFUSALS)


class AccessTokenIn(BaseModel):
    access_num: int = Field(default=100, ge=1, le=100_000, description="questions per visitor per UTC day")
    daily_cap: int = Field(
        default=1000, ge=1, le=10_000_000, description="questions per UTC day from all the link's visitors together"
    )


class AuthenticationIn(BaseModel):
    access_token: str = Field(min_length=1, max_length=64)


@router.post("/authentication", dependencies=[Depends(signin_admitted)], response_model=Envelope[str])
async def authenticate(body: AuthenticationIn, request: Request, backend: AnonymousBackend) -> JSONResponse:
    """A share-link holder becomes a visitor; ``data`` is the visitor's token (MaxKB's shape), which
    sees only its own chats. A page that sends the token it already holds (``Authorization``, with
    or without ``Bearer``) keeps its visitor and chats while that token lives. Limited per client
    address here and per share link in the chat service (429 past either)."""
    held = presented_token(request) or ""
    reply = await backend.unary(
        backend.chat.access.AuthenticateVisitor,
        pb.AuthenticateVisitorRequest(access_token=body.access_token, visitor_token=held),
    )
    return ok(reply.token)


@router.post("/{app_id}/api_key", response_model=Envelope[NewApiKeyOut])
async def create_api_key(app_id: str, backend: CallerBackend) -> JSONResponse:
    reply = await backend.unary(backend.chat.access.CreateApiKey, pb.CreateApiKeyRequest(application_id=app_id))
    return ok({"id": reply.id, "secret_key": reply.key, "application_id": app_id})


@router.post("/{app_id}/access_token", response_model=Envelope[NewAccessTokenOut])
async def create_access_token(app_id: str, backend: CallerBackend, body: AccessTokenIn | None = None) -> JSONResponse:
    wanted = body or AccessTokenIn()
    reply = await backend.unary(
        backend.chat.access.CreateAccessToken,
        pb.CreateAccessTokenRequest(application_id=app_id, access_num=wanted.access_num, daily_cap=wanted.daily_cap),
    )
    return ok(
        {
            "application_id": reply.application_id,
            "access_token": reply.access_token,
            "access_num": reply.access_num,
            "daily_cap": reply.daily_cap,
        }
    )


def export_csv(records: list[pb.ChatRecord]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS)
    writer.writeheader()
    for record in records:
        writer.writerow(export_row(record))
    return buffer.getvalue()


@router.get(
    "/{app_id}/chat/export",
    response_class=Response,
    responses=download("the application's records as CSV (UTF-8 with a byte-order mark)", "text/csv"),
)
async def export(app_id: str, backend: CallerBackend) -> Response:
    reply = await backend.unary(backend.chat.answers.ExportRecords, pb.ExportRecordsRequest(application_id=app_id))
    # A byte-order mark, so spreadsheet programs read the Chinese text as UTF-8.
    return Response(
        content="\ufeff" + export_csv(list(reply.records)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="chat-log-{app_id}.csv"'},
    )
