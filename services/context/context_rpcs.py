"""ContextService: validates the request, streams progress and the assembled context."""

from __future__ import annotations

from collections.abc import AsyncIterator

import services.context.context_messages as convert
from grpc_stubs.context.v1 import context_service_pb2 as pb
from grpc_stubs.context.v1 import context_service_pb2_grpc as pb_grpc
from kbcore.errors import InvalidRequest
from kbcore.models.base import ModelClient
from kbcore.models.endpoints import EndpointClients
from kbcore.rpc.error_mapping import Context, stream_errors, unary_errors
from kbcore.words.said import said
from services.context.history import HistoryStore
from services.context.loader import Compacting, ContextLoader


class ContextRpcs(pb_grpc.ContextServiceServicer):
    def __init__(self, history: HistoryStore, loader: ContextLoader, endpoints: EndpointClients | None = None) -> None:
        """``endpoints``: the registered models a request may name to write its summaries."""
        self._history = history
        self._loader = loader
        self._endpoints = endpoints

    async def _summary_model(self, endpoint_id: str) -> ModelClient | None:
        """The model a request names for summaries; None (the loader's deployment model) when
        it names none. An unknown id is NOT_FOUND."""
        endpoint_id = endpoint_id.strip()
        if not endpoint_id or self._endpoints is None:
            return None
        return await self._endpoints.client(endpoint_id)

    async def _check_chat(self, chat_id: str) -> None:
        _require_chat_id(chat_id)
        await self._history.require_chat(chat_id)

    @stream_errors
    async def LoadContext(
        self, request: pb.LoadContextRequest, context: Context
    ) -> AsyncIterator[pb.LoadContextResponse]:
        dialogue_number = request.dialogue_number if request.HasField("dialogue_number") else None
        model = await self._summary_model(request.aux_model_id)
        if request.HasField("client_turns"):
            events = self._loader.load_given(convert.messages(request.client_turns.messages), dialogue_number, model)
        else:
            if request.before_record_id < 0:
                raise InvalidRequest(said("before_record_id_must_not_be"))
            _require_chat_id(request.chat_id)  # the loader's read says NOT_FOUND for a chat that is not there
            events = self._loader.load(
                request.chat_id, request.before_record_id or None, dialogue_number, request.lease_holder, model
            )
        async for event in events:
            yield convert.compacting(event) if isinstance(event, Compacting) else convert.loaded(event)

    @unary_errors
    async def Compact(self, request: pb.CompactRequest, context: Context) -> pb.CompactResponse:
        await self._check_chat(request.chat_id)
        dialogue_number = request.dialogue_number if request.HasField("dialogue_number") else None
        model = await self._summary_model(request.aux_model_id)
        return convert.compacted(await self._loader.compact(request.chat_id, dialogue_number, model))


def _require_chat_id(chat_id: str) -> None:
    if not chat_id:
        raise InvalidRequest(said("chat_id_must_not_be_empty"))
