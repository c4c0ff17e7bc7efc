"""API keys and share links (operator), visitor sign-in through a share link, and the
conversation log as CSV."""

from __future__ import annotations

import csv
import io
import json
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from gateway.auth import require_operator, resolve_caller
from gateway.backends import Backends, call
from gateway.errors import ok
from gateway.routes.chat import RECORD_STATUS_NAMES
from gateway.routes.datasets import backends
from kb.chat.v1 import chat_service_pb2 as pb

router = APIRouter(prefix="/api/application", tags=["access"])

EXPORT_COLUMNS = [
    "chat_id",
    "record_id",
    "create_time",
    "question",
    "rewritten_question",
    "answer",
    "status",
    "stop_reason",
    "sufficient",
    "missing",
    "rounds",
    "error",
]


class AccessTokenIn(BaseModel):
    access_num: int = Field(default=100, ge=1, le=100_000)


class AuthenticationIn(BaseModel):
    access_token: str = Field(min_length=1, max_length=64)


@router.post("/authentication")
async def authenticate(body: AuthenticationIn, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    """A share-link holder becomes a visitor; the token it gets sees only its own chats."""
    reply = await call(
        b.chat.AuthenticateVisitor(pb.AuthenticateVisitorRequest(access_token=body.access_token), timeout=b.rpc_timeout)
    )
    return ok({"token": reply.token, "application_id": reply.application_id, "visitor_id": reply.visitor_id})


@router.post("/{app_id}/api_key")
async def create_api_key(app_id: str, request: Request, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    caller = await require_operator(request)
    reply = await call(
        b.chat.CreateApiKey(pb.CreateApiKeyRequest(application_id=app_id, caller=caller), timeout=b.rpc_timeout)
    )
    return ok({"id": reply.id, "secret_key": reply.key, "application_id": app_id})


@router.post("/{app_id}/access_token")
async def create_access_token(
    app_id: str, request: Request, b: Annotated[Backends, Depends(backends)], body: AccessTokenIn | None = None
) -> JSONResponse:
    caller = await require_operator(request)
    access_num = (body or AccessTokenIn()).access_num
    reply = await call(
        b.chat.CreateAccessToken(
            pb.CreateAccessTokenRequest(application_id=app_id, access_num=access_num, caller=caller),
            timeout=b.rpc_timeout,
        )
    )
    return ok(
        {"application_id": reply.application_id, "access_token": reply.access_token, "access_num": reply.access_num}
    )


def export_csv(records: list[pb.ChatRecord]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS)
    writer.writeheader()
    for record in records:
        details = json.loads(record.details_json or "{}")
        writer.writerow(
            {
                "chat_id": record.chat_id,
                "record_id": record.id,
                "create_time": record.created_at,
                "question": record.question,
                "rewritten_question": details.get("problem_text", ""),
                "answer": record.answer,
                "status": RECORD_STATUS_NAMES.get(record.status, "unknown"),
                "stop_reason": details.get("agent_stop_reason", ""),
                "sufficient": details.get("sufficient", ""),
                "missing": details.get("missing", ""),
                "rounds": len(details.get("agent_trace", [])),
                "error": record.error,
            }
        )
    return buffer.getvalue()


@router.get("/{app_id}/chat/export")
async def export(app_id: str, request: Request, b: Annotated[Backends, Depends(backends)]) -> Response:
    caller = await resolve_caller(request)
    reply = await call(
        b.chat.ExportRecords(pb.ExportRecordsRequest(application_id=app_id, caller=caller), timeout=b.rpc_timeout)
    )
    # A byte-order mark, so spreadsheet programs read the Chinese text as UTF-8.
    return Response(
        content="\ufeff" + export_csv(list(reply.records)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="chat-log-{app_id}.csv"'},
    )
