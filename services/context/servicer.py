"""ContextService: validates the request, streams progress and the assembled context."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from kb.context.v1 import context_service_pb2 as pb
from kb.context.v1 import context_service_pb2_grpc as pb_grpc
from kbcore.rpc import Context, RpcError, invalid, not_found, stream_errors
from services.context import convert
from services.context.history import CorruptState, HistoryStore
from services.context.loader import Compacting, ContextLoader


class ContextServicer(pb_grpc.ContextServiceServicer):
    def __init__(self, history: HistoryStore, loader: ContextLoader) -> None:
        self._history = history
        self._loader = loader

    @stream_errors
    async def LoadContext(
        self, request: pb.LoadContextRequest, context: Context
    ) -> AsyncIterator[pb.LoadContextResponse]:
        if not request.chat_id:
            raise invalid("chat_id must not be empty")
        if request.before_record_id < 0:
            raise invalid("before_record_id must not be negative")
        if not await self._history.chat_exists(request.chat_id):
            raise not_found(f"chat {request.chat_id} does not exist")
        yield convert.context_progress()
        dialogue_number = request.dialogue_number if request.HasField("dialogue_number") else None
        try:
            async for event in self._loader.load(
                request.chat_id, request.before_record_id or None, dialogue_number, request.lease_holder
            ):
                yield convert.compacting(event) if isinstance(event, Compacting) else convert.loaded(event)
        except CorruptState as exc:
            raise RpcError(grpc.StatusCode.DATA_LOSS, str(exc)) from exc
