"""A question's trace id and record id on its log lines, as text or as JSON, and the
trace id every question gets whether tracing is on or not."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from collections.abc import Callable
from typing import TypeVar

import pytest
from opentelemetry import baggage, context
from opentelemetry.sdk.trace import TracerProvider

from kbcore.settings import SettingsError
from kbcore.telemetry.log_context import RECORD_BAGGAGE, begin_question, bind_record, current_ids, question_trace_id
from kbcore.telemetry.log_format import JsonFormatter, QuestionIds, TextFormatter, configure_logging

T = TypeVar("T")
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE}-00f067aa0ba902b7-01"


def isolated(work: Callable[[], T]) -> T:
    """Runs ``work`` in a context of its own, as each RPC's task has: nothing leaks between tests."""
    return contextvars.copy_context().run(work)


def record(message: str = "hello %s", *args: object, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            exc_info = sys.exc_info()
    made = logging.LogRecord(
        "services.chat.answering.ask", logging.WARNING, __file__, 1, message, args or ("world",), exc_info
    )
    QuestionIds().filter(made)
    return made


def test_a_callers_traceparent_is_the_questions_trace_id() -> None:
    assert isolated(lambda: begin_question([("traceparent", TRACEPARENT), ("x-other", "1")])) == TRACE


def test_without_a_caller_trace_each_question_draws_its_own_id() -> None:
    first = isolated(lambda: begin_question([("traceparent", "00-not-a-trace-01")]))
    second = isolated(begin_question)
    assert len(first) == 32 and int(first, 16) and first != second


def test_the_current_spans_trace_is_the_questions_trace_when_tracing_is_on() -> None:
    tracer = TracerProvider().get_tracer("test")

    def in_span() -> tuple[str, str]:
        with tracer.start_as_current_span("Ask") as span:
            own = format(span.get_span_context().trace_id, "032x")
            return own, begin_question([("traceparent", TRACEPARENT)])

    own, chosen = isolated(in_span)
    assert chosen == own != TRACE


def test_json_lines_carry_the_questions_ids_and_only_then() -> None:
    formatter = JsonFormatter("chat")
    outside = json.loads(isolated(lambda: formatter.format(record())))
    assert outside["message"] == "hello world" and "trace_id" not in outside and "record_id" not in outside

    def inside() -> str:
        begin_question([("traceparent", TRACEPARENT)])
        bind_record(42)
        return formatter.format(record(exc=True))

    line = isolated(inside)
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["trace_id"] == TRACE and parsed["record_id"] == "42"
    assert (
        parsed["service"] == "chat"
        and parsed["level"] == "WARNING"
        and parsed["logger"] == "services.chat.answering.ask"
    )
    assert "ValueError: boom" in parsed["exception"]


def test_text_lines_stay_readable_with_the_ids_after_the_message() -> None:
    def inside() -> str:
        begin_question([("traceparent", TRACEPARENT)])
        bind_record(7)
        return TextFormatter().format(record(exc=True))

    first, _, traceback = isolated(inside).partition("\n")
    assert first.endswith(f"hello world [trace={TRACE} record=7]")
    assert "ValueError: boom" in traceback
    assert "[" not in isolated(lambda: TextFormatter().format(record()))


def test_a_record_id_from_baggage_is_believed_only_in_a_record_ids_shape() -> None:
    def with_baggage(value: str) -> str:
        context.attach(baggage.set_baggage(RECORD_BAGGAGE, value))
        return current_ids()[1]

    assert isolated(lambda: with_baggage("1234")) == "1234"
    assert isolated(lambda: with_baggage("1\nFAKE line")) == ""
    assert isolated(question_trace_id) == ""


def test_an_unknown_log_format_fails_at_start_up() -> None:
    with pytest.raises(SettingsError, match="KB_LOG_FORMAT"):
        configure_logging("chat", "INFO", "xml")
