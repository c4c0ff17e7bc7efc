"""Run a gRPC call (unary or streaming) and return the status it ended with."""

from __future__ import annotations

from typing import Any

import grpc


async def outcome_of(call: Any) -> tuple[grpc.StatusCode, str]:
    """The status ``call`` ends with, OK included."""
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:
                pass
        else:
            await call
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""
    return grpc.StatusCode.OK, ""


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    """The status of a call that is expected to fail."""
    code, details = await outcome_of(call)
    if code == grpc.StatusCode.OK:
        raise AssertionError("the call succeeded")
    return code, details
