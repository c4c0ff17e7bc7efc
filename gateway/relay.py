"""Relaying the chat service's answer stream to an HTTP client, shared by the chat route and
the OpenAI-compatible route: events that are already waiting come as one batch (one write for
the client instead of one per event), a quiet stream turns into keep-alive ticks, and the gRPC
call is cancelled the moment the client goes away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator
from typing import Any, TypeAlias

import grpc

from gateway.errors import ApiError, from_grpc
from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from kbcore.error_ids import new_error_id, with_error_id
from kbcore.words.said import said

log = logging.getLogger(__name__)

KEEP_ALIVE_SECONDS = 15.0
STREAM_BROKE = said("answer_stream_broke")
AskStream: TypeAlias = "grpc.aio.UnaryStreamCall[Any, pb.AskResponse]"
_END = object()


async def _pump(stream: AskStream, queue: asyncio.Queue[Any]) -> None:
    """Move the gRPC stream into a queue, so waiting for the next event can time out into a
    keep-alive without cancelling the call. ``read()`` (not ``async for``): the first event
    was already read with it, and grpc forbids mixing the two."""
    try:
        while (item := await stream.read()) is not grpc.aio.EOF:
            queue.put_nowait(item)  # unbounded: never waits
        queue.put_nowait(_END)
    except Exception as exc:  # never leave the response waiting on a dead pump
        queue.put_nowait(exc)


async def started(stream: AskStream) -> pb.RecordStarted:
    """The answer's first event, which names its record. Refusals (bad input, unknown chat,
    busy, too long) come before it, so the caller answers them with their HTTP status rather
    than as a 200 stream."""
    try:
        first: pb.AskResponse = await stream.read()
    except grpc.aio.AioRpcError as exc:
        raise from_grpc(exc) from exc
    if first is grpc.aio.EOF or first.WhichOneof("event") != "started":
        stream.cancel()
        raise ApiError(502, said("chat_service_ended_answer_before_started"))
    return first.started


async def finished(stream: AskStream) -> pb.AskDone:
    """The answer's end, once its record is saved, for a reader that wants the whole answer and
    not its stream; ``ApiError`` when the stream fails or ends without it."""
    done: pb.AskDone | None = None
    async with contextlib.aclosing(batches(stream)) as events:
        async for batch in events:
            done = next((item.done for item in batch or () if item.WhichOneof("event") == "done"), done)
    if done is None:
        raise ApiError(502, said("chat_service_ended_answer_without_finishing"))
    return done


def _failure(error: BaseException) -> ApiError:
    """What the reader is told when the stream fails: the backend's status as every route tells
    it, or, for a break of the gateway's own, a sentence with an error id (its traceback is in
    the gateway's log under that id)."""
    if isinstance(error, grpc.aio.AioRpcError):
        return from_grpc(error)
    error_id = new_error_id()
    log.error("the answer stream broke (error id %s)", error_id, exc_info=error)
    return ApiError(502, with_error_id(STREAM_BROKE, error_id))


async def batches(stream: AskStream) -> AsyncGenerator[list[pb.AskResponse] | None, None]:
    """The stream's events in batches of what is already waiting; ``None`` after
    ``KEEP_ALIVE_SECONDS`` of silence; ``ApiError`` when the stream fails. Use it under
    ``contextlib.aclosing`` so a client that leaves cancels the call at once."""
    queue: asyncio.Queue[Any] = asyncio.Queue()
    pump = asyncio.create_task(_pump(stream, queue))
    try:
        while True:
            if queue.empty():
                try:
                    async with asyncio.timeout(KEEP_ALIVE_SECONDS):
                        item = await queue.get()
                except TimeoutError:
                    yield None
                    continue
            else:
                item = queue.get_nowait()
            batch: list[pb.AskResponse] = []
            while True:
                if item is _END:
                    if batch:
                        yield batch
                    return
                if isinstance(item, BaseException):
                    if batch:
                        yield batch
                    raise _failure(item)
                batch.append(item)
                if queue.empty():
                    break
                item = queue.get_nowait()
            yield batch
    finally:
        # Cancelling the call cancels the chat service's work, which cancels its upstream
        # calls and the model stream.
        stream.cancel()
        pump.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pump
