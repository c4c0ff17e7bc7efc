"""MaxKB's JSON envelope, and gRPC statuses as HTTP statuses (``from_grpc``).

The HTTP status and the words for a status that came without any are the catalogue's
(``kbcore.error_catalogue``). A gRPC code shared by two refusals is told apart by the reason the
service put in the call's trailing metadata (``kbcore.rpc.reasons``): RESOURCE_EXHAUSTED is a
quota (429) unless it says the disk is full (507, Insufficient Storage).
"""

from __future__ import annotations

from typing import Any

import grpc
from fastapi.responses import JSONResponse

from kbcore.error_catalogue import refusal_for_status
from kbcore.rpc.reasons import reason_in


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def envelope(data: Any = None, message: str = "成功", code: int = 200) -> dict[str, Any]:
    return {"code": code, "message": message, "data": data}


def ok(data: Any = None) -> JSONResponse:
    return JSONResponse(envelope(data))


def error_response(status: int, message: str) -> JSONResponse:
    return JSONResponse(envelope(None, message, status), status_code=status)


def from_grpc(error: grpc.aio.AioRpcError) -> ApiError:
    """A backend's refusal as the HTTP caller gets it: the catalogue's status, and the backend's
    words (the catalogue's where it gave none)."""
    refusal = refusal_for_status(error.code(), reason_in(error.trailing_metadata()))
    return ApiError(refusal.http_status, refusal.http_message(error.details() or ""))
