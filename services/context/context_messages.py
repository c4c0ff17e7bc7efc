"""Conversions between the context service's results and its protobuf messages."""

from __future__ import annotations

from collections.abc import Sequence

from grpc_stubs.common.v1 import common_pb2
from grpc_stubs.context.v1 import context_service_pb2 as pb
from kbcore.models.base import ChatMessage
from kbcore.vocabulary import ROLE
from services.context.loader import Compacting, CompactResult, ContextInfo, LoadedContext


def messages(given: Sequence[common_pb2.Message]) -> list[ChatMessage]:
    return [ChatMessage(ROLE.name(m.role) or "user", m.content) for m in given]


def compacting(event: Compacting) -> pb.LoadContextResponse:
    return pb.LoadContextResponse(progress=common_pb2.Progress(compacting=common_pb2.Compacting(rounds=event.rounds)))


def context_info(info: ContextInfo) -> common_pb2.ContextInfo:
    return common_pb2.ContextInfo(
        enabled=info.enabled,
        recent_rounds=info.recent_rounds,
        compacted_rounds=info.compacted_rounds,
        revision=info.revision,
        token_budget=info.token_budget,
        estimated_tokens=info.estimated_tokens,
    )


def loaded(event: LoadedContext) -> pb.LoadContextResponse:
    return pb.LoadContextResponse(
        context=pb.ConversationContext(
            messages=[common_pb2.Message(role=ROLE.value(m.role), content=m.content) for m in event.messages],
            info=context_info(event.info),
        )
    )


def compacted(result: CompactResult) -> pb.CompactResponse:
    return pb.CompactResponse(info=context_info(result.info), compacted_now=result.compacted_now)
