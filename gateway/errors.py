"""MaxKB's JSON envelope and the mapping from gRPC status codes to HTTP statuses."""

from __future__ import annotations

from typing import Any

import grpc
from fastapi.responses import JSONResponse

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
    status = HTTP_STATUS.get(error.code(), 500)
    message = error.details() or error.code().name
    if status == 503:
        message = f"a backend service is unavailable: {message}"
    return ApiError(status, message)
