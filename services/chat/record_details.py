"""A record's details — the retrieval result, the dialogue context and the chat step — as the
typed ``RecordDetails`` message, and its stored form (the message's JSON in the details column).

The answering flow writes them; the wire conversions (``services.chat.chat_messages``) and the
operator's gap report (``services.chat.admin.gaps``) read them back, so they sit beside the
store rather than inside ``answering``."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from grpc_stubs.chat.v1 import chat_service_pb2 as pb
from grpc_stubs.common.v1 import common_pb2
from kbcore.vocabulary import STOP_REASON


def record_details(
    retrieval: common_pb2.RetrievalResult | None,
    context: common_pb2.ContextInfo | None,
    model: str,
    offline_model: bool,
    run_time: float,
    reasoning: str = "",
    trace_id: str = "",
) -> pb.RecordDetails:
    """What exists of a question's work; a step that never ran stays unset. ``reasoning`` is
    the model's thinking: kept here, in the details, so it is shown with the record but never
    read back as the answer that later turns' history is built from. ``trace_id`` finds the
    question's trace and log lines (``kbcore.telemetry.log_context``)."""
    step = pb.ChatStep(
        model=model, offline_model=offline_model, run_time=run_time, reasoning=reasoning, trace_id=trace_id
    )
    details = pb.RecordDetails(chat=step)
    if retrieval is not None:
        details.retrieval.CopyFrom(retrieval)
    if context is not None:
        details.context.CopyFrom(context)
    return details


def stored(details: pb.RecordDetails) -> dict[str, Any]:
    return json_format.MessageToDict(details, preserving_proto_field_name=True)


def loaded(row_details: dict[str, Any] | None) -> pb.RecordDetails:
    return json_format.ParseDict(row_details or {}, pb.RecordDetails(), ignore_unknown_fields=True)


def log_columns(details: pb.RecordDetails) -> dict[str, Any]:
    """The record's columns the log filters on, copied out of its details when it is saved
    (JSON cannot be filtered alike on SQLite and PostgreSQL). ``sufficient`` is None when
    retrieval never ran: "not known" is not "insufficient"."""
    if not details.HasField("retrieval"):
        return {"stop_reason": "", "sufficient": None, "rounds": 0}
    retrieval = details.retrieval
    return {
        "stop_reason": STOP_REASON.name(retrieval.stop_reason),
        "sufficient": retrieval.sufficient,
        "rounds": len(retrieval.rounds),
    }
