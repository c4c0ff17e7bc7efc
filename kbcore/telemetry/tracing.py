"""OpenTelemetry traces for one process: one switch (``KB_OTLP_ENDPOINT``), one place.

Off (the default) nothing is installed: no interceptor, no middleware, no per-message work on
the answer's streams. On, each process gets a TracerProvider named after it (``service.name``
gateway / chat / context / retrieval), the library's gRPC aio server and client, FastAPI and
httpx2 instrumentations, and a BatchSpanProcessor whose queue is bounded (``MAX_QUEUED_SPANS``;
spans beyond it are dropped, never buffered without end) feeding an OTLP/HTTP exporter whose
every export gives up after ``EXPORT_TIMEOUT_SECONDS``: a collector that is down costs dropped
spans, never the questions. The W3C ``traceparent`` travels in gRPC metadata and HTTP headers,
so one question is one trace across the four processes and the model calls.

Manual spans (``span``, ``start_span``) cost one attribute check when tracing is off.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import INVALID_SPAN, Span

log = logging.getLogger(__name__)

# Ended spans waiting for export, per process; more are dropped (a down collector must not grow memory).
MAX_QUEUED_SPANS = 2048
EXPORT_TIMEOUT_SECONDS = 2.0
TRACES_PATH = "/v1/traces"
# The gRPC services that are not worth a span: load balancers' health checks, tools' reflection.
UNTRACED_GRPC = ("grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection")
# Prometheus scrapes every few seconds: not a trace each time.
UNTRACED_URLS = "/metrics$"
# The SDK's and exporter's own complaints (a down collector, a full queue: one line per span)
# are kept to one line per message per this many seconds.
COMPLAINT_INTERVAL_SECONDS = 60.0
_NOISY_LOGGERS = ("opentelemetry.sdk._shared_internal", "opentelemetry.exporter.otlp.proto.http.trace_exporter")

_tracer: trace.Tracer | None = None  # set once tracing is on in this process


def enabled() -> bool:
    return _tracer is not None


def traces_url(endpoint: str) -> str:
    """The OTLP/HTTP traces URL for a collector's base URL (``http://jaeger:4318``); a URL that
    already names the traces path is kept."""
    endpoint = endpoint.strip().rstrip("/")
    return endpoint if endpoint.endswith(TRACES_PATH) else endpoint + TRACES_PATH


def setup_tracing(service: str, endpoint: str) -> TracerProvider | None:
    """Turn tracing on for this process when ``endpoint`` is given; None and nothing installed
    otherwise. Call once, before any server, channel or HTTP client is built: the
    instrumentations patch their constructors."""
    global _tracer
    if not endpoint.strip():
        return None
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(span_processor(endpoint))
    trace.set_tracer_provider(provider)  # its shutdown at exit exports what is still queued
    _instrument(provider)
    _tracer = provider.get_tracer("kb")
    log.info("tracing on: %s spans exported to %s", service, traces_url(endpoint))
    return provider


def span_processor(endpoint: str, exporter: SpanExporter | None = None) -> BatchSpanProcessor:
    """Batches towards the collector at ``endpoint``: at most ``MAX_QUEUED_SPANS`` wait, each
    export gives up after ``EXPORT_TIMEOUT_SECONDS``. The schedule delay and batch size keep
    the SDK's defaults and its ``OTEL_BSP_*`` variables."""
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=traces_url(endpoint), timeout=EXPORT_TIMEOUT_SECONDS)
    _quiet_sdk_complaints()
    return BatchSpanProcessor(exporter, max_queue_size=MAX_QUEUED_SPANS)


def _instrument(provider: TracerProvider) -> None:
    from opentelemetry.instrumentation.grpc import GrpcAioInstrumentorClient, GrpcAioInstrumentorServer
    from opentelemetry.instrumentation.grpc.filters import any_of, negate, service_name
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor

    untraced = negate(any_of(*(service_name(name) for name in UNTRACED_GRPC)))
    GrpcAioInstrumentorServer(filter_=untraced).instrument(tracer_provider=provider)  # type: ignore[no-untyped-call]
    GrpcAioInstrumentorClient(filter_=untraced).instrument(tracer_provider=provider)  # type: ignore[no-untyped-call]
    HTTPX2ClientInstrumentor().instrument(tracer_provider=provider)


def instrument_app(app: Any) -> None:
    """The gateway's FastAPI app, when tracing is on. ``send``/``receive`` get no span of their
    own: an answer's stream is one server span, not one span per SSE write."""
    if not enabled():
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.propagate import set_global_textmap
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    # A caller's ``traceparent`` is honoured; its ``baggage`` is not taken in: the record id
    # travels as baggage between the services, and no HTTP client may put one on their lines.
    set_global_textmap(TraceContextTextMapPropagator())
    FastAPIInstrumentor.instrument_app(app, excluded_urls=UNTRACED_URLS, exclude_spans=["receive", "send"])


def instrument_http_client(client: Any) -> None:
    """An httpx2 client on a transport of our own (``kbcore.models.http_transport``), when
    tracing is on: the process-wide instrumentation wraps httpx2's own transport class only,
    so such a client is instrumented by itself (a client span per request, ``traceparent``
    sent along)."""
    if not enabled():
        return
    from opentelemetry.instrumentation.httpx import HTTPX2ClientInstrumentor

    HTTPX2ClientInstrumentor.instrument_client(client, tracer_provider=trace.get_tracer_provider())


def span(
    name: str, attributes: Mapping[str, str | int | float | bool] | None = None
) -> contextlib.AbstractContextManager[Span]:
    """A child span of the current one, current while the block runs (never across a ``yield``:
    see ``start_span``); a no-op when tracing is off."""
    if _tracer is None:
        return contextlib.nullcontext(INVALID_SPAN)
    return _tracer.start_as_current_span(name, attributes=attributes)


def start_span(name: str, attributes: Mapping[str, str | int | float | bool] | None = None) -> Span:
    """A child span of the current one that the caller ends, made current only around awaits
    with ``current(span)``: a generator that yields inside a current span would leave it current
    in its consumer's context."""
    if _tracer is None:
        return INVALID_SPAN
    return _tracer.start_span(name, attributes=attributes)


def model_span(purpose: str, model: str) -> contextlib.AbstractContextManager[Span]:
    """One model call (rewrite, assess, summarize, generate …): what it was for and which model;
    the HTTP client span of the request is its child."""
    return span(f"model {purpose}", {"kb.model.purpose": purpose, "gen_ai.request.model": model})


@contextlib.contextmanager
def current(active: Span) -> Iterator[None]:
    """``active`` as the current span for the block; nothing when tracing is off."""
    if active is INVALID_SPAN:
        yield
        return
    with trace.use_span(active, end_on_exit=False):
        yield


class _OncePerInterval(logging.Filter):
    """Lets each distinct message template through once per interval."""

    def __init__(self, interval: float) -> None:
        super().__init__()
        self._interval = interval
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        key = str(record.msg)
        if now - self._last.get(key, -self._interval) < self._interval:
            return False
        self._last[key] = now
        return True


def _quiet_sdk_complaints() -> None:
    for name in _NOISY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _OncePerInterval) for f in logger.filters):
            logger.addFilter(_OncePerInterval(COMPLAINT_INTERVAL_SECONDS))
