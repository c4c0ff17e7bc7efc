"""MaxKB's JSON envelope and the mapping from gRPC status codes to HTTP statuses.

A status code shared by two refusals is told apart by the reason the service put in the call's
trailing metadata (``kbcore.rpc.reasons``): RESOURCE_EXHAUSTED is a quota (429) unless it says
the disk is full (507, Insufficient Storage).
"""

from __future__ import annotations

from typing import Any

import grpc
from fastapi.responses import JSONResponse

from kbcore.errors import DISK_FULL
from kbcore.rpc.reasons import STORAGE_FULL, reason_in

HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 413,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
# A reason's status, and what it says if the service said nothing.
REASON_STATUS = {STORAGE_FULL: (507, DISK_FULL)}


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
    reason = reason_in(error.trailing_metadata())
    if reason in REASON_STATUS:
        status, default = REASON_STATUS[reason]
        return ApiError(status, error.details() or default)
    status = HTTP_STATUS.get(error.code(), 500)
    message = error.details() or error.code().name
    if status == 503:
        message = f"a backend service is unavailable: {message}"
    return ApiError(status, message)
