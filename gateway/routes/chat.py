"""Asking (SSE), stopping, and reading the conversation log."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from gateway import sse
from gateway.auth import caller_metadata
from gateway.backends import Backends, backends, call
from gateway.errors import ApiError, from_grpc, ok
from gateway.presenter import progress_payload, record_json
from kb.chat.v1 import chat_service_pb2 as pb

router = APIRouter(prefix="/api/application", tags=["chat"])

KEEP_ALIVE_SECONDS = 15.0


class AskBody(BaseModel):
    message: str = Field(max_length=200_000)
    re_chat: bool = False
    form_data: dict[str, Any] = Field(default_factory=dict)


_END = object()


async def _pump(stream: grpc.aio.UnaryStreamCall[Any, pb.AskResponse], queue: asyncio.Queue[Any]) -> None:
    """Move the gRPC stream into a queue, so waiting for the next event can time out into a
    keep-alive without cancelling the call. ``read()`` (not ``async for``): the first event
    was already read with it, and grpc forbids mixing the two."""
    try:
        while (item := await stream.read()) is not grpc.aio.EOF:
            queue.put_nowait(item)  # unbounded: never waits
        queue.put_nowait(_END)
    except grpc.aio.AioRpcError as exc:
        queue.put_nowait(exc)
    except Exception as exc:  # never leave the response waiting on a dead pump
        queue.put_nowait(exc)


def _frame(item: pb.AskResponse, chunk: sse.ChunkFrames, chat_id: str, record_id: str) -> bytes:
    kind = item.WhichOneof("event")
    if kind == "delta":
        return chunk(item.delta.content)
    if kind == "progress":
        return sse.event("agent_status", progress_payload(item.progress))
    if kind == "done":
        return sse.chunk(chat_id, record_id, "", is_end=True)
    return b""


async def _frames(
    stream: grpc.aio.UnaryStreamCall[Any, pb.AskResponse], chat_id: str, record_id: str
) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[Any] = asyncio.Queue()
    pump = asyncio.create_task(_pump(stream, queue))
    chunk = sse.ChunkFrames(chat_id, record_id)
    try:
        while True:
            if queue.empty():
                try:
                    async with asyncio.timeout(KEEP_ALIVE_SECONDS):
                        item = await queue.get()
                except TimeoutError:
                    yield sse.KEEP_ALIVE
                    continue
            else:
                item = queue.get_nowait()
            # Every event that is already here goes out in one write: the same bytes as one
            # write each, for a fraction of the cost when the answer streams faster than it is sent.
            frames: list[bytes] = []
            while True:
                if item is _END:
                    if frames:
                        yield b"".join(frames)
                    return
                if isinstance(item, grpc.aio.AioRpcError):
                    failure = from_grpc(item)
                    frames.append(sse.error(failure.status, failure.message))
                    yield b"".join(frames)
                    return
                if isinstance(item, Exception):
                    frames.append(sse.error(502, f"the answer stream broke: {type(item).__name__}"))
                    yield b"".join(frames)
                    return
                frames.append(_frame(item, chunk, chat_id, record_id))
                if queue.empty():
                    break
                item = queue.get_nowait()
            yield b"".join(frames)
    finally:
        # A browser that went away lands here too: cancelling the call cancels the chat
        # service's work, which cancels its upstream calls and the model stream.
        stream.cancel()
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump


@router.post("/chat_message/{chat_id}")
async def chat_message(
    chat_id: str, body: AskBody, request: Request, b: Annotated[Backends, Depends(backends)]
) -> StreamingResponse:
    stream = b.chat.Ask(
        pb.AskRequest(
            chat_id=chat_id,
            message=body.message,
            re_chat=body.re_chat,
            form_data_json=json.dumps(body.form_data, ensure_ascii=False),
        ),
        timeout=b.ask_timeout,
        metadata=caller_metadata(request),
    )
    # Refusals (bad input, unknown chat, busy, too long) come before the first event and
    # are answered with their HTTP status, not as a 200 stream.
    try:
        first = await stream.read()
    except grpc.aio.AioRpcError as exc:
        raise from_grpc(exc) from exc
    if first is grpc.aio.EOF or first.WhichOneof("event") != "started":
        stream.cancel()
        raise ApiError(502, "the chat service ended the answer before it started")
    return StreamingResponse(
        _frames(stream, chat_id, first.started.record_id),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post("/chat_message/{chat_id}/stop")
async def stop(chat_id: str, request: Request, b: Annotated[Backends, Depends(backends)]) -> JSONResponse:
    reply = await call(
        b.chat.Stop(pb.StopRequest(chat_id=chat_id), timeout=b.rpc_timeout, metadata=caller_metadata(request))
    )
    return ok({"stopped": reply.stopped})


@router.get("/{app_id}/chat/{chat_id}/chat_record/{page}/{size}")
async def list_records(
    app_id: str, chat_id: str, page: int, size: int, request: Request, b: Annotated[Backends, Depends(backends)]
) -> JSONResponse:
    reply = await call(
        b.chat.ListRecords(
            pb.ListRecordsRequest(chat_id=chat_id, page=page, page_size=size, application_id=app_id),
            timeout=b.rpc_timeout,
            metadata=caller_metadata(request),
        )
    )
    return ok({"records": [record_json(r) for r in reply.records], "current": page, "size": size, "total": reply.total})


@router.get("/{app_id}/chat/{chat_id}/chat_record/{record_id}")
async def get_record(
    app_id: str, chat_id: str, record_id: str, request: Request, b: Annotated[Backends, Depends(backends)]
) -> JSONResponse:
    reply = await call(
        b.chat.GetRecord(
            pb.GetRecordRequest(chat_id=chat_id, record_id=record_id, application_id=app_id),
            timeout=b.rpc_timeout,
            metadata=caller_metadata(request),
        )
    )
    return ok(record_json(reply.record))
