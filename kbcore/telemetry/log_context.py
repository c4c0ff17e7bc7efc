"""The question a line of work belongs to: its trace id and its record id, for the record's
details and for every log line emitted while it is handled.

A question always has a trace id, whether tracing is on or not: it costs 16 random bytes and
lets the record and its log lines be found together. With tracing on it is the trace's own id
(the current span's); off, a caller's W3C ``traceparent`` is honoured, else one is drawn. The
record id, known once the chat service has created the record, travels to the context and
retrieval services as W3C baggage when tracing is on (the propagators send it with the
``traceparent``); off, only the chat service's own lines carry it.

Both live in ``contextvars``: an RPC runs in a task of its own, so each question sees its own.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any

from opentelemetry import baggage, context, trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

RECORD_BAGGAGE = "kb.record_id"
_W3C = TraceContextTextMapPropagator()
_trace_id: ContextVar[str] = ContextVar("kb_trace_id", default="")
_record_id: ContextVar[str] = ContextVar("kb_record_id", default="")


def _span_trace_id() -> str:
    span_context = trace.get_current_span().get_span_context()
    return trace.format_trace_id(span_context.trace_id) if span_context.is_valid else ""


def _caller_trace_id(metadata: Iterable[tuple[str, Any]]) -> str:
    """The trace id of a well-formed ``traceparent`` among ``metadata``; "" when there is none."""
    carrier = {key: value for key, value in metadata if key in ("traceparent", "tracestate") and isinstance(value, str)}
    if "traceparent" not in carrier:
        return ""
    span_context = trace.get_current_span(_W3C.extract(carrier)).get_span_context()
    return trace.format_trace_id(span_context.trace_id) if span_context.is_valid else ""


def begin_question(metadata: Iterable[tuple[str, Any]] = ()) -> str:
    """Fix the trace id of the question this task handles (see the module's docstring) and
    return it: the current span's, else the caller's ``traceparent``'s, else a new one."""
    trace_id = _span_trace_id() or _caller_trace_id(metadata) or secrets.token_hex(16)
    _trace_id.set(trace_id)
    return trace_id


def question_trace_id() -> str:
    """The trace id of the question this task handles; "" outside one."""
    return _trace_id.get() or _span_trace_id()


def bind_record(record_id: int | str) -> None:
    """The record this task's question writes: on its log lines, and (tracing on) on the
    calls it makes to other services, as baggage. The baggage is attached without a detach:
    it lives as long as the RPC's task, whose context ends with it."""
    _record_id.set(str(record_id))
    span = trace.get_current_span()
    if span.get_span_context().is_valid:
        span.set_attribute(RECORD_BAGGAGE, str(record_id))
        context.attach(baggage.set_baggage(RECORD_BAGGAGE, str(record_id)))


def current_ids() -> tuple[str, str]:
    """(trace id, record id) of the work this task does; "" for what is not known."""
    return _trace_id.get() or _span_trace_id(), _record_id.get() or _baggage_record_id()


def _baggage_record_id() -> str:
    """The record id another service sent as baggage; only a record id's shape is believed
    (baggage can come from any HTTP client, and must not forge log lines)."""
    value = baggage.get_baggage(RECORD_BAGGAGE)
    return value if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19 else ""
