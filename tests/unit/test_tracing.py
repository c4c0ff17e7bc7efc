"""Tracing is one setting, off by default, and a collector that is down never makes a
process buffer without bound."""

from __future__ import annotations

import logging
import socket

import pytest
from opentelemetry.sdk.trace import TracerProvider

import kbcore.telemetry.tracing as tracing
from kbcore.settings import Settings


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_tracing_is_off_by_default_and_installs_nothing() -> None:
    assert Settings().otlp_endpoint == ""
    assert tracing.setup_tracing("chat", Settings().otlp_endpoint) is None
    assert not tracing.enabled()
    with tracing.model_span("assess", "m") as span:
        assert not span.get_span_context().is_valid  # a no-op span: nothing recorded, nothing queued
    assert not tracing.start_span("retrieval round").get_span_context().is_valid


@pytest.mark.parametrize(
    ("endpoint", "url"),
    [
        ("http://jaeger:4318", "http://jaeger:4318/v1/traces"),
        ("http://jaeger:4318/", "http://jaeger:4318/v1/traces"),
        ("http://collector:4318/v1/traces", "http://collector:4318/v1/traces"),
    ],
)
def test_the_endpoint_is_the_collectors_base_url(endpoint: str, url: str) -> None:
    assert tracing.traces_url(endpoint) == url


def test_a_collector_that_is_down_costs_dropped_spans_never_unbounded_memory(caplog: pytest.LogCaptureFixture) -> None:
    processor = tracing.span_processor(f"http://127.0.0.1:{closed_port()}")
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("test")
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(3 * tracing.MAX_QUEUED_SPANS):
                tracer.start_span("question").end()
        # The queue the SDK keeps (a bounded deque) never holds more than the bound.
        queue = processor._batch_processor._queue
        assert queue.maxlen == tracing.MAX_QUEUED_SPANS
        assert len(queue) <= tracing.MAX_QUEUED_SPANS
        # Thousands of spans dropped, and the log says so once, not once a span.
        dropped = [r for r in caplog.records if "dropping" in r.getMessage().lower()]
        assert len(dropped) == 1
    finally:
        processor._batch_processor.shutdown(timeout_millis=0)  # abandons the retries at once
