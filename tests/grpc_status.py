"""Run a gRPC call (unary or streaming) that is expected to fail, and return its status."""

from __future__ import annotations

from typing import Any

import grpc


async def status_of(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:
                pass
        else:
            await call
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""
    raise AssertionError("the call succeeded")
