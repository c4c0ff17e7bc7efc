"""Small helpers for servicers: readable status errors and enum/string conversions shared
by every service and the gateway."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any, NoReturn, TypeAlias

import grpc

from kb.common.v1 import common_pb2

# grpc ships no type information; servicer methods name their context with this alias.
Context: TypeAlias = Any

STOP_REASONS = {
    "sufficient": common_pb2.STOP_REASON_SUFFICIENT,
    "max_rounds": common_pb2.STOP_REASON_MAX_ROUNDS,
    "duplicate_query": common_pb2.STOP_REASON_DUPLICATE_QUERY,
    "no_new_evidence": common_pb2.STOP_REASON_NO_NEW_EVIDENCE,
    "evidence_budget": common_pb2.STOP_REASON_EVIDENCE_BUDGET,
    "no_followup_query": common_pb2.STOP_REASON_NO_FOLLOWUP_QUERY,
    "no_datasets": common_pb2.STOP_REASON_NO_DATASETS,
    "assessment_error": common_pb2.STOP_REASON_ASSESSMENT_ERROR,
}
STOP_REASON_NAMES = {value: name for name, value in STOP_REASONS.items()}
# The Chinese label the interfaces show for each stop reason (the seed's table, §6.1).
STOP_REASON_LABELS = {
    "sufficient": "资料充分",
    "max_rounds": "达到检索轮次上限",
    "duplicate_query": "查询重复",
    "no_new_evidence": "未发现新增资料",
    "evidence_budget": "达到资料容量上限",
    "no_followup_query": "无后续查询",
    "no_datasets": "未关联知识库",
    "assessment_error": "资料核验未完成",
}

SEARCH_MODES = {
    "vector": common_pb2.SEARCH_MODE_VECTOR,
    "keyword": common_pb2.SEARCH_MODE_KEYWORD,
    "hybrid": common_pb2.SEARCH_MODE_HYBRID,
}
SEARCH_MODE_NAMES = {value: name for name, value in SEARCH_MODES.items()}

PHASE_NAMES = {
    common_pb2.PHASE_CONTEXT: "context",
    common_pb2.PHASE_COMPACTING: "compacting",
    common_pb2.PHASE_RETRIEVING: "retrieving",
    common_pb2.PHASE_ASSESSED: "assessed",
    common_pb2.PHASE_GENERATING: "generating",
}

ROLES = {"system": common_pb2.ROLE_SYSTEM, "user": common_pb2.ROLE_USER, "assistant": common_pb2.ROLE_ASSISTANT}
ROLE_NAMES = {value: name for name, value in ROLES.items()}


class NotFound(LookupError):
    """Something a request names does not exist; servicers answer NOT_FOUND with this message."""


class RpcError(Exception):
    """Raised inside a servicer to end the call with ``code`` and a message a person understands."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> RpcError:
    return RpcError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> RpcError:
    return RpcError(grpc.StatusCode.NOT_FOUND, message)


async def abort(context: grpc.aio.ServicerContext[object, object], error: RpcError) -> NoReturn:
    await context.abort(error.code, error.message)
    raise AssertionError("unreachable: abort raises")


def unary_errors(method: Any) -> Any:
    """Turn an ``RpcError`` (or ``NotFound``) raised by a unary servicer method into its status code."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        try:
            return await method(self, request, context)
        except RpcError as error:
            await context.abort(error.code, error.message)
        except NotFound as missing:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(missing))

    return wrapper


def stream_errors(method: Any) -> Any:
    """The same for server-streaming methods (async generators)."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[Any]:
        try:
            async for item in method(self, request, context):
                yield item
        except RpcError as error:
            await context.abort(error.code, error.message)
        except NotFound as missing:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(missing))

    return wrapper


def round_json(trace: common_pb2.RoundTrace) -> dict[str, Any]:
    """One retrieval round as the record details and the hit test show it (the seed's shape)."""
    return {
        "round": trace.round,
        "queries": list(trace.queries),
        "new_paragraph_ids": list(trace.new_paragraph_ids),
        "total_evidence": trace.total_evidence,
        "sufficient": trace.sufficient,
        "missing": trace.missing,
        "next_queries": list(trace.next_queries),
    }


def paragraph_json(paragraph: common_pb2.Paragraph) -> dict[str, Any]:
    """A paragraph as the HTTP API and the record details show it (MaxKB's ``similarity``)."""
    return {
        "id": paragraph.id,
        "dataset_id": paragraph.dataset_id,
        "document_id": paragraph.document_id,
        "document_name": paragraph.document_name,
        "title": paragraph.title,
        "content": paragraph.content,
        "similarity": round(paragraph.score, 4),
        "round": paragraph.round,
    }
