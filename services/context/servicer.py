"""ContextService: validates the request, streams progress and the assembled context."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from kb.context.v1 import context_service_pb2 as pb
from kb.context.v1 import context_service_pb2_grpc as pb_grpc
from kbcore.db.lease import ChatBusy
from kbcore.rpc import Context, RpcError, invalid, not_found, stream_errors, unary_errors
from services.context import convert
from services.context.history import CorruptState, HistoryStore
from services.context.loader import Compacting, CompactionFailed, ContextLoader


def _data_loss(exc: CorruptState) -> RpcError:
    """A broken summary row is reported, not retried: every later load would hit it again."""
    return RpcError(grpc.StatusCode.DATA_LOSS, str(exc))


class ContextServicer(pb_grpc.ContextServiceServicer):
    def __init__(self, history: HistoryStore, loader: ContextLoader) -> None:
        self._history = history
        self._loader = loader

    async def _check_chat(self, chat_id: str) -> None:
        if not chat_id:
            raise invalid("chat_id must not be empty")
        if not await self._history.chat_exists(chat_id):
            raise not_found(f"chat {chat_id} does not exist")

    @stream_errors
    async def LoadContext(
        self, request: pb.LoadContextRequest, context: Context
    ) -> AsyncIterator[pb.LoadContextResponse]:
        if request.before_record_id < 0:
            raise invalid("before_record_id must not be negative")
        await self._check_chat(request.chat_id)
        yield convert.context_progress()
        dialogue_number = request.dialogue_number if request.HasField("dialogue_number") else None
        try:
            async for event in self._loader.load(
                request.chat_id, request.before_record_id or None, dialogue_number, request.lease_holder
            ):
                yield convert.compacting(event) if isinstance(event, Compacting) else convert.loaded(event)
        except CorruptState as exc:
            raise _data_loss(exc) from exc

    @unary_errors
    async def Compact(self, request: pb.CompactRequest, context: Context) -> pb.CompactResponse:
        await self._check_chat(request.chat_id)
        dialogue_number = request.dialogue_number if request.HasField("dialogue_number") else None
        try:
            return convert.compacted(await self._loader.compact(request.chat_id, dialogue_number))
        except ChatBusy as exc:
            raise RpcError(
                grpc.StatusCode.ABORTED,
                f"chat {request.chat_id} is answering a question or being compacted; try again when it has finished",
            ) from exc
        except CompactionFailed as exc:
            raise RpcError(grpc.StatusCode.UNAVAILABLE, str(exc)) from exc
        except CorruptState as exc:
            raise _data_loss(exc) from exc
